-- SPDX-License-Identifier: BSD-3-Clause
-- One index less on orders, the table the order writer inserts into at the sale's pace.
--
-- orders_event_status (event_id, status) served only the counts by status of one event
-- (reconcile, flashgatectl event show, stats): slow-path queries that the unique index
-- (event_id, user_id) serves as well, reading that event's orders. Every inserted order paid
-- for it: dropping it made the order writer's batches about 15 % faster (bench_order_writer,
-- 92-116k -> 123-130k orders/s on the test machine).
DROP INDEX orders_event_status;
