/*
 * The compiled twins of dataplane/tx.py's multi-path accounting: same_port_runs
 * (port_groupx4's runs of one TX port inside an rx burst) and TxModel.send_runs
 * (send_packetsx4 into the per-port TX buffer), run after run.
 */
#include "twins.h"

#define MAX_PKT_BURST 512

/* tx.same_port_runs: maximal runs of one destination inside one rx burst, dropped
 * packets' runs left out. Returns the number of runs. */
int64_t same_port_runs(const int64_t *dest, const int64_t *burst, int64_t n, int64_t *run_ports, int64_t *run_lens)
{
    int64_t runs = 0;
    for (int64_t i = 0; i < n;) {
        int64_t j = i + 1;
        while (j < n && dest[j] == dest[i] && burst[j] == burst[i])
            j++;
        if (dest[i] >= 0) {
            run_ports[runs] = dest[i];
            run_lens[runs++] = j - i;
        }
        i = j;
    }
    return runs;
}

/* TxModel.send_runs: a run of at least tx_burst packets goes out directly when its
 * port's buffer is empty; any other run is appended, and a buffer that reaches
 * MAX_PKT_BURST is sent. A `single` run is send_single_packet per packet (send_single:
 * rx_burst packets make a burst). */
void send_runs(struct tx_counters *tx, const int64_t *run_ports, const int64_t *run_lens, const uint8_t *single,
               int64_t n)
{
    for (int64_t r = 0; r < n; r++) {
        int64_t port = run_ports[r], len = run_lens[r];
        if (single && single[r]) {
            int64_t total = tx->len[port] + len;
            tx->tx_bursts[port] += total / tx->rx_burst;
            tx->len[port] = total % tx->rx_burst;
            tx->buffered[port] += len;
            continue;
        }
        tx->runs[port]++;
        if (tx->len[port] == 0 && len >= tx->tx_burst) {
            tx->tx_bursts[port]++;
            tx->direct[port] += len;
            continue;
        }
        int64_t total = tx->len[port] + len;
        tx->tx_bursts[port] += total / MAX_PKT_BURST;
        tx->len[port] = total % MAX_PKT_BURST;
        tx->buffered[port] += len;
    }
}
