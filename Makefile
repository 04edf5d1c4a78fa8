# Front door for people: `make demo` analyses a bundled real trace, `make test` runs every
# test. Both install missing Debian packages first (as root) via scripts/deps.sh.
BUILD ?= build
BUILD_ASAN ?= build-asan
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
DEMO_TRACE = examples/resnet50_num_workers_0.pt.trace.json.gz
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: all build demo test test-asan deps deps-test clean bench install deb

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

bench: build
	@bench/run_all.sh

clean:
	rm -rf $(BUILD) $(BUILD_ASAN)
