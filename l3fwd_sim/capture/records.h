/*
 * capture/records.py's layout of an output record, shared by the compiled writers.
 */
#ifndef L3FWD_SIM_CAPTURE_RECORDS_H
#define L3FWD_SIM_CAPTURE_RECORDS_H

#include <string.h>

#include "../compiled.h"

#define ROW_BYTES 80             /* records.RECORD_ROW: a record header and HEAD_BYTES of frame */
#define ROW_SLACK ROW_BYTES      /* bytes an output must have beyond its last record (lay_out_record) */

/* One record as it goes to a classic pcap at `at`: its row (record header and the
 * frame's first ROW_BYTES - 16 bytes, edited) cut to the frame, then the rest of a
 * longer frame from `frame`, where the reader left it. The whole row is copied — one
 * fixed-size copy, the compiler's own moves — so `at` must have ROW_SLACK bytes of room
 * past the record. */
static inline void lay_out_record(uint8_t *at, const uint8_t *row, int64_t caplen, const uint8_t *frame)
{
    memcpy(at, row, ROW_BYTES);
    if (caplen > ROW_BYTES - 16)
        memcpy(at + ROW_BYTES, frame + ROW_BYTES - 16, (size_t)(caplen - (ROW_BYTES - 16)));
}

#endif
