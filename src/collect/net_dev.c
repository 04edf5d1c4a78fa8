/* /proc/net/dev: per interface byte/packet/error/drop counters, to tell "the data comes
 * over the network" and "the NIC is saturated" apart from local disk reads. */
#include "collect/host_parse.h"

#include <string.h>

#include "util/grow.h"

int gw_parse_net_dev(const char *text, gw_host_sample *out, int *bad_line)
{
    int line_no = 0;
    for (const char *line = text; *line != '\0';) {
        const char *end = strchr(line, '\n');
        const char *colon = strchr(line, ':');
        line_no++;
        /* The two header lines have no ':' before the newline; "Inter-|" and " face |". */
        if (line_no > 2 && colon != NULL && (end == NULL || colon < end)) {
            const char *name = line;
            while (*name == ' ')
                name++;
            gw_net_counters net;
            memset(&net, 0, sizeof net);
            gw_copy_field(net.name, sizeof net.name, name, (size_t)(colon - name));
            /* rx: bytes packets errs drop fifo frame compressed multicast; tx: bytes
             * packets errs drop fifo colls carrier compressed */
            uint64_t v[16];
            const char *p = colon + 1;
            int count = 0;
            while (count < 16 && gw_next_u64(&p, &v[count]))
                count++;
            if (count < 16) {
                *bad_line = line_no;
                return -1;
            }
            net.rx_bytes = v[0];
            net.rx_packets = v[1];
            net.rx_errs = v[2];
            net.rx_drop = v[3];
            net.tx_bytes = v[8];
            net.tx_packets = v[9];
            net.tx_errs = v[10];
            net.tx_drop = v[11];
            if (gw_grow((void **)&out->nets, &out->net_cap, out->net_count + 1,
                        sizeof *out->nets) != 0) {
                *bad_line = 0;
                return -1;
            }
            out->nets[out->net_count++] = net;
        }
        if (end == NULL)
            break;
        line = end + 1;
    }
    return 0;
}
