-- Hand-made Nsight Systems export with CPU sampling (see README.md in this folder): a plain
-- CUDA program (pid 4242, thread 4243) runs kernel A (1-2 ms), checks results on the host for
-- ~10 ms with nothing traced, then launches kernel B (12-13 ms). nsys sampled its CPU: the
-- stacks (innermost first) name check_results five times, main twice (a libcuda frame it
-- could not resolve and a statically linked cudart frame above it), and once only a kernel
-- frame; another process (pid 999) is sampled in the same gap, and the program once while
-- kernel A ran. None of that may count but the eight samples of the program in the gap.
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.11.0');
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'vector_add'),
 (10, 'check_results(float const*, int)'), (11, '/home/u/app/vecadd'), (12, 'main'),
 (13, '__memcmp_avx2_movbe'), (14, '/usr/lib/x86_64-linux-gnu/libc.so.6'), (15, '0x7f2ac0f85a20'),
 (16, '/usr/lib/x86_64-linux-gnu/libcuda.so.545.23.06'), (17, 'libcudart_static_aa4a6bcb5fce58be'),
 (18, '0xffffffff99c00b40'), (19, '[kernel.kallsyms]'), (20, 'other_process_work'), (21, '/usr/bin/other');
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
 (1, 1500000, 0, 1, 71168954515, 1), (2, 3000000, 0, 1, 71168954515, 1), (3, 4000000, 0, 1, 71168954515, 1),
 (4, 5000000, 0, 1, 71168954515, 1), (5, 6000000, 0, 1, 71168954515, 1), (6, 7000000, 0, 1, 71168954515, 1),
 (7, 8000000, 0, 1, 71168954515, 1), (8, 9000000, 0, 1, 71168954515, 1), (9, 10000000, 0, 1, 71168954515, 1),
 (10, 5500000, 1, 1, 16760439783, 1);
CREATE TABLE SAMPLING_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL, module INTEGER NOT NULL,
 kernelMode INTEGER, thumbCode INTEGER, unresolved INTEGER, specialEntry INTEGER, originalIP INTEGER,
 unwindMethod INTEGER, stackDepth INTEGER NOT NULL, PRIMARY KEY (id, stackDepth));
INSERT INTO SAMPLING_CALLCHAINS VALUES
 (1, 12, 11, 0, 0, 0, 0, 0, 0, 0),
 (2, 18, 19, 1, 0, 1, 0, 0, 0, 0), (2, 13, 14, 0, 0, 0, 0, 0, 0, 1), (2, 10, 11, 0, 0, 0, 0, 0, 0, 2), (2, 12, 11, 0, 0, 0, 0, 0, 0, 3),
 (3, 10, 11, 0, 0, 0, 0, 0, 0, 0), (3, 12, 11, 0, 0, 0, 0, 0, 0, 1),
 (4, 13, 14, 0, 0, 0, 0, 0, 0, 0), (4, 10, 11, 0, 0, 0, 0, 0, 0, 1), (4, 12, 11, 0, 0, 0, 0, 0, 0, 2),
 (5, 10, 11, 0, 0, 0, 0, 0, 0, 0),
 (6, 10, 11, 0, 0, 0, 0, 0, 0, 0), (6, 12, 11, 0, 0, 0, 0, 0, 0, 1),
 (7, 15, 16, 0, 0, 1, 0, 0, 0, 0), (7, 17, 11, 0, 0, 0, 0, 0, 0, 1), (7, 12, 11, 0, 0, 0, 0, 0, 0, 2),
 (8, 15, 16, 0, 0, 1, 0, 0, 0, 0), (8, 12, 11, 0, 0, 0, 0, 0, 0, 1),
 (9, 18, 19, 1, 0, 1, 0, 0, 0, 0),
 (10, 20, 21, 0, 0, 0, 0, 0, 0, 0);
