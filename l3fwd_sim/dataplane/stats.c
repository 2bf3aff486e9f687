/*
 * The compiled twin of dataplane/stats.py's RunStats.count: per RX port the packets
 * received, the drops by reason and where the packets went (flows: RX port x 1 + TX
 * port, column 0 the dropped ones), in one pass.
 */
#include "twins.h"

void count_packets(const int64_t *in_port, const uint8_t *reason, const int64_t *dest, int64_t n, int64_t reasons,
                   int64_t *rx, int64_t *drops, int64_t *flows, int64_t flow_width)
{
    for (int64_t i = 0; i < n; i++) {
        rx[in_port[i]]++;
        drops[in_port[i] * reasons + reason[i]] += reason[i] != 0;
        flows[in_port[i] * flow_width + dest[i] + 1]++;
    }
}
