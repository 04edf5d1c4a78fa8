-- Hand-written Nsight Systems 2024.6.2 export (schema 3.16.1) of a job whose CUDA tracing
-- failed, in the shape of StellaWava/benchmarking-n-profiling-'s report1.sqlite: no CUPTI
-- tables and no TARGET_INFO_GPU, OS-runtime rows only, and the 23 DIAGNOSTIC_EVENT rows of
-- that export as nsys wrote them (messages with newlines and tabs, timestamps before the
-- session start, i.e. negative). Four warnings/errors are about CUDA or CUPTI; together they
-- are longer than one note, which once made the reader stop mid-query and refuse the file.
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'NVIDIA Nsight Systems'),
 ('EXPORT_PRODUCT_VERSION', '2024.6.2.225'), ('EXPORT_SCHEMA_VERSION', '3.16.1'),
 ('EXPORT_SCHEMA_VERSION_MAJOR', '3'), ('EXPORT_SCHEMA_VERSION_MINOR', '16'), ('EXPORT_SCHEMA_VERSION_MICRO', '1');
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'gpu_benchmark'), (2, 'cuda00003c00012'), (3, 'ioctl'), (4, 'fopen'),
 (5, 'poll'), (6, 'fclose'), (7, 'OS runtime libraries profiling started'),
 (8, 'OS runtime libraries profiling finished');
CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INTEGER);
INSERT INTO ThreadNames VALUES (1, 0, 283769563125312), (2, 0, 283769563125331), (1, 0, 283769563125334);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
INSERT INTO PROCESSES VALUES (283769562988544, 136768, 'python');
CREATE TABLE ENUM_NSYS_EVENT_CLASS (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES (27, 'TRACE_PROCESS_EVENT_OS_RUNTIME', 'OSRT runtime'),
 (31, 'TRACE_PROCESS_EVENT_OS_RUNTIME_START', 'OSRT start'), (32, 'TRACE_PROCESS_EVENT_OS_RUNTIME_FINISH', 'OSRT finish');
CREATE TABLE ENUM_DIAGNOSTIC_SEVERITY_LEVEL (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_DIAGNOSTIC_SEVERITY_LEVEL VALUES (0, 'UnknownLevel', 'Unknown'), (1, 'Info', 'Info'),
 (2, 'Warning', 'Warning'), (3, 'Error', 'Error'), (4, 'Verbose', 'Verbose');
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1784862250542772098, '2026-07-24T03:04:10', '2026-07-23T23:04:10');
CREATE TABLE ANALYSIS_DETAILS (globalVid INTEGER, duration INTEGER, startTime INTEGER, stopTime INTEGER);
INSERT INTO ANALYSIS_DETAILS VALUES (281474976710656, 1144846358, 620077789, 1764924147);
CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
 nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, nestingLevel INTEGER, callchainId INTEGER NOT NULL);
-- 12 of the export's 491 calls (the largest poll waits among them) and its start/finish markers.
INSERT INTO OSRT_API VALUES (46304279, 46304279, 31, 283769562988544, 7, 0, NULL, 0),
 (66666268, 66668795, 27, 283769563125312, 3, 0, 0, 0), (66675577, 66693214, 27, 283769563125312, 3, 0, 0, 0),
 (66694305, 66773034, 27, 283769563125312, 3, 0, 0, 0), (79352730, 79360488, 27, 283769563125312, 4, 0, 0, 0),
 (80519206, 80520425, 27, 283769563125331, 5, 0, 0, 0), (369529369, 469626678, 27, 283769563125334, 5, 0, 0, 0),
 (469919447, 477454582, 27, 283769563125334, 5, 0, 0, 0), (477473824, 520868993, 27, 283769563125334, 5, 0, 0, 0),
 (967585232, 967598338, 27, 283769563125312, 4, 0, 0, 0), (967789898, 967792763, 27, 283769563125312, 6, 0, 0, 0),
 (968587561, 968587561, 32, 283769562988544, 8, 0, NULL, 0), (968590646, 968590646, 32, 283769562988544, 8, 0, NULL, 0);
CREATE TABLE DIAGNOSTIC_EVENT (timestamp INTEGER NOT NULL, timestampType INTEGER NOT NULL, source INTEGER NOT NULL,
 severity INTEGER NOT NULL, text TEXT NOT NULL, globalPid INTEGER);
INSERT INTO DIAGNOSTIC_EVENT VALUES (-9098182,1,2,2,replace('Unable to collect CPU kernel IP/backtrace samples. perf event paranoid level is 2. \nChange the paranoid level to 1 to enable CPU kernel sample collection.\nTry\nsudo sh -c ''echo 1 >/proc/sys/kernel/perf_event_paranoid''\n to change the paranoid level to 1.','\n',char(10)),281474976710656);
INSERT INTO DIAGNOSTIC_EVENT VALUES (-8740349,1,2,1,'Dwarf backtraces collected.',281474976710656);
INSERT INTO DIAGNOSTIC_EVENT VALUES (-8738284,1,2,1,'Event ''CPU Clock (sw)'', with sampling period 2000000, used to trigger process-tree CPU IP sample collection.',281474976710656);
INSERT INTO DIAGNOSTIC_EVENT VALUES (-121882,1,2,1,'4 CPU IP samples collected for every CPU IP backtrace collected.',281474976710656);
INSERT INTO DIAGNOSTIC_EVENT VALUES (0,1,3,1,'Profiling has started.',-144115188075855872);
INSERT INTO DIAGNOSTIC_EVENT VALUES (65339,1,2,1,'Process was launched by the profiler, see /tmp/nvidia/nsight_systems/quadd_session_10136749/streams/pid_136768_stdout.log and stderr.log for program output',283769562988544);
INSERT INTO DIAGNOSTIC_EVENT VALUES (43240554,1,1,1,'Common injection library initialized successfully.',283769562988544);
INSERT INTO DIAGNOSTIC_EVENT VALUES (52409430,1,1,1,'OS runtime libraries injection initialized successfully.',283769562988544);
INSERT INTO DIAGNOSTIC_EVENT VALUES (58393295,1,1,1,'OpenGL injection initialized successfully.',283769562988544);
INSERT INTO DIAGNOSTIC_EVENT VALUES (80513909,1,1,1,'Buffers holding CUDA trace data will be flushed on CudaProfilerStop() call. See --flush-on-cudaprofilerstop to control this behavior.',283769562988544);
INSERT INTO DIAGNOSTIC_EVENT VALUES (89841766,1,1,1,'Loaded CUPTI library: /opt/nvidia/nsight-systems/2024.6.2/target-linux-x64/libcupti.so.12.8',283769562988544);
INSERT INTO DIAGNOSTIC_EVENT VALUES (89844955,1,1,2,'Installed CUDA driver version (13.1) is not supported by this build of Nsight Systems. CUDA trace will be collected using libraries for driver version 12.8',283769562988544);
INSERT INTO DIAGNOSTIC_EVENT VALUES (106421526,2,3,2,'No NVTX events collected. Does the process use NVTX?',283769562988544);
INSERT INTO DIAGNOSTIC_EVENT VALUES (106424034,2,3,2,'No OpenGL events collected. Does the process use OpenGL?',283769562988544);
INSERT INTO DIAGNOSTIC_EVENT VALUES (106424718,2,3,2,'No CUDA events collected. Does the process use CUDA?',283769562988544);
INSERT INTO DIAGNOSTIC_EVENT VALUES (106426668,2,3,1,'Number of OS runtime libraries events collected: 	491.',283769562988544);
INSERT INTO DIAGNOSTIC_EVENT VALUES (318604270,1,1,1,'Enabling trace for device graph launch',283769562988544);
INSERT INTO DIAGNOSTIC_EVENT VALUES (323312863,1,1,1,'CUDA injection initialized successfully.',283769562988544);
INSERT INTO DIAGNOSTIC_EVENT VALUES (967837605,1,1,3,'ActivityFlushAll returned 2: CUPTI_ERROR_INVALID_DEVICE',283769562988544);
INSERT INTO DIAGNOSTIC_EVENT VALUES (968575214,1,1,3,'ActivityFlushAll returned 15: CUPTI_ERROR_NOT_INITIALIZED',283769562988544);
INSERT INTO DIAGNOSTIC_EVENT VALUES (968582665,1,1,1,'Number of CUPTI events produced: 	0, CUPTI buffers: 50.',283769562988544);
INSERT INTO DIAGNOSTIC_EVENT VALUES (1144846358,1,3,1,'Profiling has stopped.',-144115188075855872);
INSERT INTO DIAGNOSTIC_EVENT VALUES (1301906727,1,2,1,'Number of IP samples collected: 	44.',281474976710656);
