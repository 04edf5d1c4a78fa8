-- Hand-made Nsight Systems export (see README.md in this folder): a program (pid 4242, thread
-- 4243) opens an NVTX range "main" at 1 ms that covers its whole run; nsys's injection log
-- (DIAGNOSTIC_EVENT, the target's clock) says its CUDA tracing began at 20 ms ("Buffers holding
-- CUDA trace data ..."), loaded CUPTI at 50 ms and was set up at 120 ms; the first CUDA call nsys
-- recorded is a cudaMalloc at 200-300 ms, then one launch and one kernel at 300.2-310 ms. Another
-- process (pid 999) logged loading CUPTI at 5 ms, and the OS-runtime injection started at 3 ms:
-- neither dates this program's first CUDA call.
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.11.0');
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'vector_add'), (3, 'main'), (4, 'cudaMalloc_v3020');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
 globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
 (200000000, 300000000, 0, 71168954515, 1, 4, 0, NULL), (300100000, 300150000, 0, 71168954515, 2, 1, 0, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
 contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
 shortName INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
 blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
 (300200000, 310000000, 0, 1, 7, 2, 71168954368, 2, 4096, 1, 1, 256, 1, 1);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
 category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER,
 binaryData TEXT);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId) VALUES (1000000, 320000000, 59, NULL, 71168954515, 3);
CREATE TABLE DIAGNOSTIC_EVENT (timestamp INTEGER NOT NULL, timestampType INTEGER NOT NULL, source INTEGER NOT NULL,
 severity INTEGER NOT NULL, text TEXT NOT NULL, globalPid INTEGER);
INSERT INTO DIAGNOSTIC_EVENT VALUES
 (800000, 1, 3, 1, 'Profiling has started.', -144115188075855872),
 (3000000, 1, 1, 1, 'OS runtime libraries injection initialized successfully.', 71168954368),
 (5000000, 1, 1, 1, 'Loaded CUPTI library: /opt/nvidia/nsight-systems/target-linux-x64/libcupti.so', 16760438784),
 (20000000, 1, 1, 1, 'Buffers holding CUDA trace data will be flushed on CudaProfilerStop() call.', 71168954368),
 (50000000, 1, 1, 1, 'Loaded CUPTI library: /opt/nvidia/nsight-systems/target-linux-x64/libcupti.so', 71168954368),
 (120000000, 1, 1, 1, 'CUDA injection initialized successfully.', 71168954368),
 (400000000, 1, 1, 1, 'Number of CUPTI events produced: 3, CUPTI buffers: 2.', 71168954368);
