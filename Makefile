# Front door for people: `make demo` analyses a bundled real trace, `make test` runs every
# test. Both install missing Debian packages first (as root) via scripts/deps.sh.
BUILD ?= build
BUILD_ASAN ?= build-asan
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
DEMO_TRACE = examples/resnet50_num_workers_0.pt.trace.json.gz
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: all build demo test test-asan deps deps-test clean bench fuzz install deb dist dist-check

all: build

deps:
	@scripts/deps.sh build

deps-test:
	@scripts/deps.sh browser
	@test -d tests/browser/node_modules/playwright-core || (cd tests/browser && npm ci --no-audit --no-fund)

build: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@echo "== gpuwhy analyze $(DEMO_TRACE)"
	@$(BUILD)/gpuwhy analyze $(DEMO_TRACE)

test: deps-test
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer, warnings as errors.
test-asan: deps-test
	@cmake -S . -B $(BUILD_ASAN) -DGW_SANITIZE=ON -DGW_WERROR=ON -DCMAKE_BUILD_TYPE=Debug $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD_ASAN) -j $(JOBS)
	@cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

# Installs under $(DESTDIR)$(PREFIX): bin/gpuwhy, lib/gpuwhy/libgpuwhy-cupti.so (when built),
# the man page, lib/systemd/system/gpuwhy-serve.service, share/doc/gpuwhy, share/gpuwhy/deploy.
install: build
	@DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

# The Debian package (CPack): $(BUILD)/gpuwhy_VERSION_ARCH.deb, installing under /usr.
deb: build
	@cd $(BUILD) && cpack -G DEB

# Portable tarballs for x86_64 and aarch64 in build-dist/ (docs/dist.md): installs the cross
# toolchain, the arm64 libraries and qemu as root; runs each build's unit tests.
dist:
	@scripts/deps.sh dist
	@scripts/dist.sh

# The dist test with the aarch64 half: `make test` checks the x86_64 tarball only; this adds
# the cross-built aarch64 one, run under qemu against x86_64 byte for byte (a cold cross-build
# takes minutes, which is why it is not part of `make test`).
dist-check: build
	@scripts/deps.sh dist
	@cd $(BUILD) && GW_DIST_CROSS=1 ctest -R '^cli_dist_portable$$' --output-on-failure

bench: build
	@bench/run_all.sh

# The long fuzzing campaign (docs/fuzzing.md): every libFuzzer target of tests/fuzz for
# FUZZ_SECONDS each, FUZZ_JOBS at a time, at the lowest CPU priority. Corpus, crashes and a
# summary line per target stay in FUZZ_WORK between campaigns.
FUZZ_BUILD ?= $(BUILD)/fuzz
FUZZ_WORK ?= fuzz-work
FUZZ_SECONDS ?= 3600
FUZZ_JOBS ?= $(JOBS)
fuzz: build
	@scripts/deps.sh fuzz
	@cmake -S tests/fuzz -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS)
	@tests/fuzz/campaign.sh $(FUZZ_BUILD) $(FUZZ_WORK) $(FUZZ_SECONDS) $(FUZZ_JOBS) $(CURDIR)/$(BUILD)/gpuwhy $(CURDIR)/$(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) build-dist
