-- SPDX-License-Identifier: BSD-3-Clause
-- A redelivery is recognised by (event, user, reservation id), not by the reservation id alone.
--
-- A reservation id is unique per data plane (docs/wire.md); two data planes misconfigured with
-- one dp id make the same ids for different buyers. With reservation_id UNIQUE, the order
-- writer's ON CONFLICT (reservation_id) DO NOTHING took the second buyer's reservation for a
-- redelivery of the first one's: that buyer never got an order, and the stock stayed taken.
-- Now UNIQUE (event_id, user_id) alone says "this buyer has its order" (a redelivery is the
-- same buyer's), both buyers' orders are kept, and the order writer reports an id shared by two
-- buyers loudly (order-writer/order_store.c). The plain index serves that check and the
-- lookups by reservation id.
ALTER TABLE orders DROP CONSTRAINT orders_reservation_id_key;
CREATE INDEX orders_reservation_id ON orders (reservation_id);
