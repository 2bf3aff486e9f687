#!/usr/bin/env bash
# Build Debian 12's dpdk-l3fwd-graph (DPDK 22.11, package dpdk-doc's examples, against
# libdpdk-dev) into OUTDIR/l3fwd-graph. It runs over net_pcap ports as it is: it asks for
# no Rx offload. 22.11's sample has IPv4 routes only (its IPv6 nodes came with v23.07), so
# on IPv4 and non-IP traffic it forwards as v26.07's does (tests/verify/test_graph_real.py).
#
# usage: tests/dpdk/build-l3fwd-graph-22.11.sh OUTDIR
#   needs: apt-get install dpdk dpdk-dev libdpdk-dev dpdk-doc pkg-config
set -euo pipefail
out=${1:?usage: build-l3fwd-graph-22.11.sh OUTDIR}
source=/usr/share/dpdk/examples/l3fwd-graph/main.c
[ -f "$source" ] || { echo "no $source: install dpdk-doc" >&2; exit 3; }
pkg-config --exists libdpdk || { echo "no libdpdk for pkg-config: install libdpdk-dev pkg-config" >&2; exit 3; }
mkdir -p "$out"
cc -O2 -w -o "$out/l3fwd-graph" "$source" $(pkg-config --cflags --libs libdpdk)
echo "$out/l3fwd-graph"
