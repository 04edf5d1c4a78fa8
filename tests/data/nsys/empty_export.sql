-- Hand-made "empty" Nsight Systems export: strings and target information only, the shape
-- of amir-ghz/DynamicViT's nsys_profile.sqlite (see README.md in this folder).
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'python');
CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INTEGER);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER, name TEXT);
INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'Test GPU');
