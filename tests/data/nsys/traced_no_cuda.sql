-- Hand-made Nsight Systems export of a capture with CUDA tracing on in which the program made
-- no CUDA call: nsys then writes no CUPTI table at all. The shape of a public OpenMP tutorial's
-- report1.sqlite (./heat_map built without offload, 154.5 s) and of a Julia job's export that
-- says "No CUDA events collected" (see README.md in this folder). The test swaps the command
-- for a launcher (mpirun) to check the per-rank advice.
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'heat_map');
CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INTEGER);
CREATE TABLE META_DATA_CAPTURE (name TEXT, value TEXT);
INSERT INTO META_DATA_CAPTURE VALUES ('CAPTURE_EVENT_TYPE', 'NvtxEvents');
INSERT INTO META_DATA_CAPTURE VALUES ('CAPTURE_EVENT_TYPE', 'Cuda');
INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:COMMAND', './heat_map');
INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:COLLECT_CUDA_TRACE', 'true');
CREATE TABLE ANALYSIS_DETAILS (globalVid INTEGER, duration INTEGER, startTime INTEGER, stopTime INTEGER);
INSERT INTO ANALYSIS_DETAILS VALUES (281474976710656, 154460840860, 357905174, 154818746034);
CREATE TABLE DIAGNOSTIC_EVENT (timestamp INTEGER, source INTEGER, severity INTEGER, text TEXT, globalPid INTEGER);
INSERT INTO DIAGNOSTIC_EVENT VALUES (1000, 0, 1, 'CUDA injection initialized successfully.', 0);
INSERT INTO DIAGNOSTIC_EVENT VALUES (2000, 0, 2, 'No CUDA events collected. Does the process use CUDA?', 0);
