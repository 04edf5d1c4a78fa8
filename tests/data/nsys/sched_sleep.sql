-- Hand-made Nsight Systems export with the OS scheduler's events (see README.md in this
-- folder): a program (pid 4242, thread 4243) runs three kernels, and between them spends
-- ~10 ms in an NVTX range load_weights each time, asleep for 9 ms of it (scheduled out at
-- 2.5 ms, in at 11.5 ms; out at 13.5 ms, in at 22.5 ms). nsys writes SCHED_EVENTS in no time
-- order: the rows below are shuffled. Another process's thread (pid 999) is scheduled in the
-- same stretches and must not count.
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.11.0');
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'vector_add'), (3, 'load_weights');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
 globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
 (900000, 950000, 0, 71168954515, 1, 1, 0, NULL), (11900000, 11950000, 0, 71168954515, 2, 1, 0, NULL),
 (22900000, 22950000, 0, 71168954515, 3, 1, 0, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
 contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
 shortName INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
 blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
 (1000000, 2000000, 0, 1, 7, 1, 71168954368, 2, 4096, 1, 1, 256, 1, 1),
 (12000000, 13000000, 0, 1, 7, 2, 71168954368, 2, 4096, 1, 1, 256, 1, 1),
 (23000000, 24000000, 0, 1, 7, 3, 71168954368, 2, 4096, 1, 1, 256, 1, 1);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
 category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER,
 binaryData TEXT);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId) VALUES
 (2000000, 11900000, 59, NULL, 71168954515, 3), (13000000, 22900000, 59, NULL, 71168954515, 3);
CREATE TABLE SCHED_EVENTS (start INTEGER NOT NULL, cpu INTEGER NOT NULL, isSchedIn INTEGER NOT NULL,
 globalTid INTEGER, threadState INTEGER, threadBlock INTEGER);
INSERT INTO SCHED_EVENTS VALUES
 (22500000, 3, 1, 71168954515, 0, NULL), (11500000, 2, 1, 71168954515, 0, NULL), (100000, 1, 1, 71168954515, 0, NULL),
 (2600000, 2, 1, 16760439783, 0, NULL), (13500000, 3, 0, 71168954515, 0, NULL), (2500000, 2, 0, 71168954515, 0, NULL),
 (11400000, 2, 0, 16760439783, 0, NULL);
