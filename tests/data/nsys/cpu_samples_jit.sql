-- Hand-made Nsight Systems export with CPU sampling (see README.md in this folder), shaped on a
-- public one: a program (pid 4242, thread 4243) runs kernel A (1-2 ms), then compiles its next
-- kernel with NVRTC for ~10 ms before launching it (12-13 ms). NVRTC has no symbols, so nsys
-- gives its frames as addresses in libnvrtc.so, and cuts the deep compiler stacks with a
-- "[Max depth]" frame. Six samples are in the compiler, two in the program's main.
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.11.0');
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'vector_add'),
 (11, '/home/u/app/jitprog'), (12, 'main'), (13, '0x7f3f484dfe01'), (14, '0x7f3f484e3e07'),
 (15, '/opt/cuda/targets/x86_64-linux/lib/libnvrtc.so.13.3.33'), (16, '[Max depth]'),
 (17, '0x41713f'), (18, '/usr/lib/nsight-systems/target-linux-x64/nsys-launcher');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
 globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
 (900000, 950000, 0, 71168954515, 1, 1, 0, NULL), (11900000, 11950000, 0, 71168954515, 2, 1, 0, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
 contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
 shortName INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
 blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
 (1000000, 2000000, 0, 1, 7, 1, 71168954368, 2, 4096, 1, 1, 256, 1, 1),
 (12000000, 13000000, 0, 1, 7, 2, 71168954368, 2, 4096, 1, 1, 256, 1, 1);
CREATE TABLE COMPOSITE_EVENTS (id INTEGER NOT NULL PRIMARY KEY, start INTEGER NOT NULL, cpu INTEGER,
 threadState INTEGER, globalTid INTEGER, cpuCycles INTEGER NOT NULL);
INSERT INTO COMPOSITE_EVENTS VALUES
 (1, 3000000, 0, 1, 71168954515, 1), (2, 4000000, 0, 1, 71168954515, 1), (3, 5000000, 0, 1, 71168954515, 1),
 (4, 6000000, 0, 1, 71168954515, 1), (5, 7000000, 0, 1, 71168954515, 1), (6, 8000000, 0, 1, 71168954515, 1),
 (7, 9000000, 0, 1, 71168954515, 1), (8, 10000000, 0, 1, 71168954515, 1);
CREATE TABLE SAMPLING_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL, module INTEGER NOT NULL,
 kernelMode INTEGER, thumbCode INTEGER, unresolved INTEGER, specialEntry INTEGER, originalIP INTEGER,
 unwindMethod INTEGER, stackDepth INTEGER NOT NULL, PRIMARY KEY (id, stackDepth));
INSERT INTO SAMPLING_CALLCHAINS VALUES
 (1, 13, 15, 0, 0, 1, 0, 0, 0, 0), (1, 14, 15, 0, 0, 1, 0, 0, 0, 1), (1, 16, 16, 0, 0, 0, 0, 0, 0, 2),
 (2, 13, 15, 0, 0, 1, 0, 0, 0, 0), (2, 16, 16, 0, 0, 0, 0, 0, 0, 1),
 (3, 14, 15, 0, 0, 1, 0, 0, 0, 0), (3, 16, 16, 0, 0, 0, 0, 0, 0, 1),
 (4, 13, 15, 0, 0, 1, 0, 0, 0, 0), (4, 14, 15, 0, 0, 1, 0, 0, 0, 1), (4, 16, 16, 0, 0, 0, 0, 0, 0, 2),
 (5, 14, 15, 0, 0, 1, 0, 0, 0, 0), (5, 16, 16, 0, 0, 0, 0, 0, 0, 1),
 (6, 13, 15, 0, 0, 1, 0, 0, 0, 0), (6, 16, 16, 0, 0, 0, 0, 0, 0, 1),
 (7, 12, 11, 0, 0, 0, 0, 0, 0, 0),
 (8, 17, 18, 0, 0, 1, 0, 0, 0, 0), (8, 12, 11, 0, 0, 0, 0, 0, 0, 1);
