-- Hand-made Nsight Systems export of nsys 2022.4's shape without capture settings
-- (no META_DATA_CAPTURE): no event table, and among the strings nsys's own "No CUDA events
-- collected" and the program's last output, a C++ exception that ended it at start (the shape
-- of a public export whose program threw std::logic_error before any CUDA call).
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, './solver');
INSERT INTO StringIds VALUES (2, 'terminate called after throwing an instance of ''std::logic_error''
  what():  basic_string::_M_construct null not valid
');
INSERT INTO StringIds VALUES (3, 'UCX_TLS=rc,cuda_copy,cuda_ipc,gdr_copy,sm');
INSERT INTO StringIds VALUES (4, 'No CUDA events collected. Does the process use CUDA?');
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER, name TEXT);
INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'Test GPU');
