#!/usr/bin/env bash
# Build Debian 12's dpdk-l3fwd (DPDK 22.11, package dpdk-doc's examples, against
# libdpdk-dev) so that it runs over net_pcap ports, into OUTDIR/l3fwd/build/l3fwd.
#
# 22.11's l3fwd always asks for the Rx checksum offloads, which net_pcap lacks, and has no
# --relax-rx-offload: unmodified it cannot forward over net_pcap at all. The patch below does
# what --relax-rx-offload does from 23.11 on, always: mask the requested Rx offloads with the
# port's capabilities, for the port and for each Rx queue (docs/releases.md). 22.11's l3fwd
# never reads the checksum flags, so nothing else changes.
#
# usage: tests/dpdk/build-l3fwd-22.11.sh OUTDIR
#   needs: apt-get install dpdk dpdk-dev libdpdk-dev dpdk-doc pkg-config
#   SOURCES=DIR takes the l3fwd and common folders from DIR instead (an edited copy).
set -euo pipefail
out=${1:?usage: build-l3fwd-22.11.sh OUTDIR}
sources=${SOURCES:-/usr/share/dpdk/examples}
[ -d "$sources/l3fwd" ] || { echo "no $sources/l3fwd: install dpdk-doc" >&2; exit 3; }
pkg-config --exists libdpdk || { echo "no libdpdk for pkg-config: install libdpdk-dev pkg-config" >&2; exit 3; }
mkdir -p "$out"
rm -rf "$out/l3fwd" "$out/common"
cp -r "$sources/l3fwd" "$sources/common" "$out/"
main="$out/l3fwd/main.c"
grep -q 'ret = rte_eth_dev_configure(portid, nb_rx_queue,' "$main"
grep -q 'rxq_conf.offloads = port_conf.rxmode.offloads;' "$main"
sed -i 's/^\(\t\t\)ret = rte_eth_dev_configure(portid, nb_rx_queue,/\1local_port_conf.rxmode.offloads \&= dev_info.rx_offload_capa;\n&/' "$main"
sed -i 's/rxq_conf.offloads = port_conf.rxmode.offloads;/rxq_conf.offloads = port_conf.rxmode.offloads \& dev_info.rx_offload_capa;/' "$main"
make -s -C "$out/l3fwd" >&2
echo "$out/l3fwd/build/l3fwd"
