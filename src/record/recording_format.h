/* Identity of the gpuwhy recording file format (SQLite): PRAGMA application_id and
 * user_version. The schema itself is documented in docs/recording-format.md and created
 * by record/writer.c. */
#ifndef GW_RECORD_RECORDING_FORMAT_H
#define GW_RECORD_RECORDING_FORMAT_H

/* "GPWY" as a big-endian 32-bit integer. */
#define GW_RECORDING_APPLICATION_ID 0x47505759
/* Bump when the schema changes incompatibly; readers refuse newer versions. */
#define GW_RECORDING_USER_VERSION 1

#endif
