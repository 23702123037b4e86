# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# shellcheck disable=SC2034 # EDGE_* and E2E_DP_ARGS are for the tests that source this
#
# The start-up every test of a real TLS edge shares (edge_test.sh for test_edge_haproxy.sh,
# test_edge_nginx.sh and test_edge_haproxy_tcp.sh; test_edge_haproxy_doc.sh), sourced after
# tests/e2e/harness.sh:
#
# edge_begin TAG DATAPLANE CONTROLPLANE FLASHGATECTL N_PORTS [DATAPLANE ARGS...]
#   Free ports for the control plane's PULL and PUB (PULL, PUB) and N_PORTS more
#   (EDGE_PORTS[0..N_PORTS)); the data plane started (e2e_begin TAG) with them and the
#   arguments, trusting the edge, which connects from the client namespace's address
#   (198.18.10.1), through [edge] trusted_file: a CDN-sized list of 5,000 networks, the edge's
#   address among them, none of the shoppers' (198.18.20.0/23); Redis, PostgreSQL and the
#   control plane started (CP_EXE, CTL_EXE; T_CTL_OUT=diag). On exit the edge (EDGE_PID) is
#   stopped, then what harness.sh started.
# edge_addrs ADDR...
#   Adds the addresses (the edge's, the shoppers') to the client namespace's loopback.
# edge_tls
#   A CA and the edge's certificate for $EDGE_ADDR (and edge.test), made with openssl into
#   $E2E_TMP: ca.pem, edge.pem, edge.key, and edge-full.pem (certificate and key); its output
#   in $E2E_TMP/openssl.log. Returns openssl's status.
# EDGE_ADDR is the edge's address (198.18.20.254); EDGE_DIR this folder.

EDGE_DIR=${E2E_DIR:?harness.sh first}/edge
EDGE_ADDR=198.18.20.254
EDGE_PID=
EDGE_TRUSTED=

edge_cleanup() {
	[ -z "$EDGE_PID" ] || fg_stop_pid "$EDGE_PID" 10 || true
	EDGE_PID=
	[ -z "$EDGE_TRUSTED" ] || rm -f "$EDGE_TRUSTED"
}

# The trusted edges' file into $1: 2,500 IPv4 and 2,500 IPv6 networks of a made-up CDN
# (every other /24 of 100.64.0.0/10, /48s of 2001:db8::/32: none merges), comments, and the
# edge's own address.
edge_trusted_file() {
	python3 - "$1" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("# a CDN's origin-facing ranges (made up), as docs/edge.md shows the file\n\n")
    for i in range(2500):
        f.write("100.%d.%d.0/24\n" % (64 + i // 128, 2 * (i % 128)))
        f.write("2001:db8:%x::/48  # edge %d\n" % (i, i))
    f.write("198.18.10.1   # the test's edge: the client namespace's address\n")
PY
}

edge_begin() {
	local tag=$1 dp=$2 n=$5 ports
	CP_EXE=$3 CTL_EXE=$4
	shift 5
	mapfile -t ports < <(fg_free_ports $((2 + n)))
	PULL=tcp://127.0.0.1:${ports[0]} PUB=tcp://127.0.0.1:${ports[1]}
	EDGE_PORTS=("${ports[@]:2}")
	EDGE_TRUSTED=$(mktemp)
	edge_trusted_file "$EDGE_TRUSTED"
	E2E_DP_ARGS=(-s "bridge.push_endpoint=$PULL" -s "bridge.sub_endpoint=$PUB"
		-s "edge.trusted_file=$EDGE_TRUSTED" "$@")
	e2e_begin "$tag" "$dp"
	trap 'edge_cleanup; e2e_cleanup' EXIT
	if [ ! -x "$CP_EXE" ] || [ ! -x "$CTL_EXE" ]; then
		tap_bail "control plane and flashgatectl given"
	fi
	tap_diag "$(grep -m1 'trusted edges:' "$E2E_TMP/dataplane.log")"
	t_services_up "$E2E_TMP/svc"
	T_CP=$CP_EXE T_CTL=$CTL_EXE T_PULL=$PULL T_PUB=$PUB T_CTL_OUT=diag
	t_cp_up || tap_bail "control plane ready"
}

edge_addrs() {
	local a
	for a in "$@"; do
		fg_ns_exec ip addr add "$a/32" dev lo
	done
}

edge_tls() {
	local d=$E2E_TMP
	{
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
			-subj "/CN=flashgate e2e test CA" -keyout "$d/ca.key" -out "$d/ca.pem" &&
			openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
				-subj "/CN=edge.test" -keyout "$d/edge.key" -out "$d/edge.csr" &&
			printf 'subjectAltName=IP:%s,DNS:edge.test\nextendedKeyUsage=serverAuth\n' \
				"$EDGE_ADDR" >"$d/edge.ext" &&
			openssl x509 -req -in "$d/edge.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
				-CAcreateserial -days 1 -extfile "$d/edge.ext" -out "$d/edge.pem" &&
			cat "$d/edge.pem" "$d/edge.key" >"$d/edge-full.pem"
	} >"$d/openssl.log" 2>&1
}
