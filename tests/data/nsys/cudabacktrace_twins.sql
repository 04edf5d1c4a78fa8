-- Hand-made Nsight Systems 2022-style export (see README.md in this folder) captured with
-- --cudabacktrace: nsys wrote a second row for each call it took a backtrace of, the same
-- correlation id on the same thread (pid 4242, thread 4243), enclosing the call's own row,
-- eventClass 67 with a callchainId, and its strings say "CUDA backtrace profiling started".
-- Three calls have twins (one twin far from its call in rowid order), one call has none; a
-- second thread (4244) reuses correlation id 12, a different call of its own.
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'vector_add'), (3, 'cudaMemcpy_v3020'),
 (4, 'cudaMemcpy'), (5, 'cudaLaunchKernel'), (6, 'CUDA backtrace profiling started'), (7, 'cudaMalloc_v3020');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
 globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
 (1000000, 1300000, 0, 71168954515, 10, 7, 0, NULL),
 (2000000, 12000100, 67, 71168954515, 11, 4, 0, 1),
 (2000200, 12000000, 0, 71168954515, 11, 3, 0, NULL),
 (12100000, 12150100, 0, 71168954515, 12, 1, 0, NULL),
 (13000000, 23000000, 0, 71168954515, 13, 3, 0, NULL),
 (12500000, 12600000, 0, 71168954516, 12, 7, 0, NULL),
 (12099900, 12150200, 67, 71168954515, 12, 5, 0, 2),
 (12999800, 23000300, 67, 71168954515, 13, 4, 0, 3);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
 contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
 shortName INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
 blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (12200000, 12900000, 0, 1, 7, 12, 71168954368, 2, 4096, 1, 1, 256, 1, 1);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
 contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,
 copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES
 (2100000, 11900000, 0, 1, 7, 11, 71168954368, 33554432, 1, 0, 2),
 (13100000, 22900000, 0, 1, 7, 13, 71168954368, 33554432, 2, 2, 0);
