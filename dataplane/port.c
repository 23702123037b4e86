/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/port.h"

#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>

#include "common/log.h"

int
port_start(uint16_t port_id, const struct port_setup *s, struct port_info *info)
{
	struct rte_eth_dev_info dev;
	struct rte_eth_conf conf;
	uint16_t rx_desc = s->rx_desc, tx_desc = s->tx_desc;
	int rc;

	memset(info, 0, sizeof(*info));
	rc = rte_eth_dev_info_get(port_id, &dev);
	if (rc != 0) {
		LOG_ERR("port %u: cannot read device info: %s", port_id, strerror(-rc));
		return rc;
	}
	rte_eth_dev_get_name_by_port(port_id, info->name);
	if (s->n_queues > dev.max_rx_queues || s->n_queues > dev.max_tx_queues) {
		LOG_ERR("port %u (%s): %u workers need %u RX and TX queues, the device has %u RX and "
			"%u TX; use fewer worker lcores or a device with more queues "
			"(net_af_packet: qpairs=N)",
			port_id, info->name, s->n_queues, s->n_queues, dev.max_rx_queues,
			dev.max_tx_queues);
		return -EINVAL;
	}

	memset(&conf, 0, sizeof(conf));
	if (s->n_queues > 1) {
		/* One client address must always reach the same worker, so that per-IP limits
		 * are exact: hash on IPv4 addresses only, never on TCP ports. */
		uint64_t want = RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_FRAG_IPV4 | RTE_ETH_RSS_NONFRAG_IPV4_TCP |
				RTE_ETH_RSS_NONFRAG_IPV4_OTHER | RTE_ETH_RSS_L3_SRC_ONLY;
		uint64_t hf = want & dev.flow_type_rss_offloads;

		if ((hf & ~RTE_ETH_RSS_L3_SRC_ONLY) == 0) {
			LOG_WARN("port %u (%s): no IPv4 RSS on this device; packets of one client may "
				 "reach several workers",
				port_id, info->name);
		} else {
			conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
			conf.rx_adv_conf.rss_conf.rss_hf = hf;
			info->rss = true;
			if (!(hf & RTE_ETH_RSS_L3_SRC_ONLY) && (hf & RTE_ETH_RSS_NONFRAG_IPV4_TCP))
				LOG_WARN("port %u (%s): RSS cannot be limited to IPv4 addresses; TCP "
					 "ports are hashed too",
					port_id, info->name);
		}
	}
	uint64_t rx_ck = RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_CKSUM;
	uint64_t tx_ck = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM;

	conf.rxmode.offloads = dev.rx_offload_capa & rx_ck;
	if ((dev.tx_offload_capa & tx_ck) == tx_ck) {
		conf.txmode.offloads = tx_ck;
		info->tx_cksum_offload = true;
	}
	rc = rte_eth_dev_configure(port_id, s->n_queues, s->n_queues, &conf);
	if (rc != 0) {
		LOG_ERR("port %u (%s): configure failed: %s", port_id, info->name, strerror(-rc));
		return rc;
	}
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &rx_desc, &tx_desc);
	if (rc != 0) {
		LOG_ERR("port %u (%s): descriptor counts %u/%u refused: %s", port_id, info->name,
			rx_desc, tx_desc, strerror(-rc));
		return rc;
	}
	int socket = rte_eth_dev_socket_id(port_id);

	for (uint16_t q = 0; q < s->n_queues; q++) {
		rc = rte_eth_rx_queue_setup(port_id, q, rx_desc, socket < 0 ? 0 : (unsigned)socket,
			NULL, s->pools[q]);
		if (rc != 0) {
			LOG_ERR("port %u (%s): RX queue %u setup failed: %s", port_id, info->name, q,
				strerror(-rc));
			return rc;
		}
		struct rte_eth_txconf txc = dev.default_txconf;

		txc.offloads = conf.txmode.offloads;
		rc = rte_eth_tx_queue_setup(port_id, q, tx_desc, socket < 0 ? 0 : (unsigned)socket,
			&txc);
		if (rc != 0) {
			LOG_ERR("port %u (%s): TX queue %u setup failed: %s", port_id, info->name, q,
				strerror(-rc));
			return rc;
		}
	}
	rc = rte_eth_dev_start(port_id);
	if (rc != 0) {
		LOG_ERR("port %u (%s): start failed: %s", port_id, info->name, strerror(-rc));
		return rc;
	}
	rc = rte_eth_macaddr_get(port_id, &info->mac);
	if (rc != 0) {
		LOG_ERR("port %u (%s): cannot read MAC address: %s", port_id, info->name,
			strerror(-rc));
		rte_eth_dev_stop(port_id);
		return rc;
	}
	return 0;
}

void
port_stop(uint16_t port_id)
{
	rte_eth_dev_stop(port_id);
	rte_eth_dev_close(port_id);
}
