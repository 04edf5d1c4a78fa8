# CMake toolchain for cross-building gpuwhy for aarch64 (Grace Hopper, GB200) on a Debian 12
# x86_64 machine, with Debian's gcc-aarch64-linux-gnu and the arm64 multiarch libraries
# (scripts/deps.sh dist installs both). Executables built here (unit tests) run through
# qemu-user-static, named explicitly because binfmt_misc may not be registered.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static)
# Only the arm64 .pc files: the host's would hand out x86_64 library paths.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
