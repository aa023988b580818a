# Airlock — build, run and test. `make run` and `make test` set up a fresh Debian 12
# machine themselves (apt packages when root, the wails CLI, npm packages).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
export PATH := $(PATH):/usr/local/go/bin:$(HOME)/go/bin
export DEBIAN_FRONTEND := noninteractive

GO      ?= go
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/airlock-app/airlock/app/buildinfo.Version=$(VERSION)
BIN     := build/bin

# What the app, the sandbox and the tests need from Debian.
APT_PACKAGES := build-essential pkg-config libgtk-3-dev libwebkit2gtk-4.1-dev bubblewrap slirp4netns \
	xvfb xauth x11-utils xdotool imagemagick dbus dbus-x11 gnome-keyring libsecret-tools \
	dunst libglib2.0-bin \
	chromium sqlite3 git curl ca-certificates python3 \
	qemu-system-x86 qemu-utils e2fsprogs libpam0g-dev

.PHONY: all deps apt-deps pam-service frontend-deps build build-cli build-desktop run test check-bindings vet staticcheck \
	test-go test-frontend smoke e2e mcp-e2e agents-e2e bench screenshots sandbox-image sandbox-test-image clean

all: build

## deps: install what is missing (apt packages when root, npm packages)
deps: apt-deps pam-service frontend-deps

apt-deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -z "$$missing" ]; then echo "apt: all packages present"; exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then \
		echo "Missing Debian packages. Run this, then try again:"; \
		echo "  sudo apt-get update && sudo apt-get install -y $$missing"; exit 1; fi; \
	echo "apt: installing $$missing"; \
	apt-get update -q && apt-get install -y -q --no-install-recommends $$missing

# Airlock's PAM service: at a terminal, a person proves presence with their login password,
# checked by the core with the system's common-auth and common-account (installed when root).
pam-service:
	@if [ -f /etc/pam.d/airlock ]; then echo "pam: /etc/pam.d/airlock present"; exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then \
		echo "No /etc/pam.d/airlock: terminal answers use the sudo (else login) PAM service. To install Airlock's:"; \
		echo "  sudo install -m 0644 build/linux/airlock.pam /etc/pam.d/airlock"; exit 0; fi; \
	install -m 0644 build/linux/airlock.pam /etc/pam.d/airlock && echo "pam: installed /etc/pam.d/airlock"

frontend-deps: frontend/node_modules/.package-lock.json

frontend/node_modules/.package-lock.json: frontend/package-lock.json frontend/package.json
	cd frontend && npm ci --no-audit --no-fund
	@touch $@

## build: both executables into build/bin
build: build-cli build-desktop

# airlock is static and links no core, so its hot paths start fast; airlockd hosts the
# core headless (`airlock daemon` becomes it); airlock-agent holds the agent commands and
# the MCP SDK (`airlock mcp` and `airlock hook` become it).
build-cli:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/airlock ./cmd/airlock
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/airlock-agent ./cmd/airlock-agent
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/airlockd ./cmd/airlockd

build-desktop: frontend-deps
	VERSION=$(VERSION) LDFLAGS="$(LDFLAGS)" scripts/build-desktop.sh

## run: set up, build and open the desktop window
run: deps build
	@if [ -z "$${DISPLAY:-}$${WAYLAND_DISPLAY:-}" ]; then \
		echo "No display (DISPLAY/WAYLAND_DISPLAY unset): run this from a desktop session,"; \
		echo "or run the headless core with: $(BIN)/airlock daemon"; exit 1; fi
	$(BIN)/airlock-desktop

## test: set up, build, then every check (the committed Wails bindings are current, vet,
## staticcheck, Go tests with -race against the real keyring, frontend type check and unit
## tests, the window smoke test, the browser end-to-end tests, the MCP end-to-end test, the
## agents end-to-end test)
test: deps check-bindings build vet staticcheck test-go test-frontend smoke e2e mcp-e2e agents-e2e
	@echo "make test: all checks passed"

# Before build, which regenerates frontend/wailsjs in place: the committed copy must be what
# the façade generates (frontend/src/lib/wire.gen.ts has its own check in the Go tests).
check-bindings:
	scripts/check-bindings.sh

# Every build tag's files: the production desktop build (the frontend
# embedded) and the bindings generator's view of the façade.
vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt: not formatted: $$unformatted (run gofmt -w)"; exit 1; fi
	$(GO) vet ./...
	@[ -d frontend/dist ] || { echo "vet: frontend/dist is missing (the production build embeds it): run make build first"; exit 1; }
	$(GO) vet -tags production,webkit2_41 . ./frontend ./app/desktop
	$(GO) vet -tags bindings,webkit2_41 ./app/desktop

staticcheck:
	@command -v staticcheck >/dev/null || $(GO) install honnef.co/go/tools/cmd/staticcheck@latest
	staticcheck ./...
	staticcheck -tags production,webkit2_41 . ./frontend ./app/desktop
	staticcheck -tags bindings,webkit2_41 ./app/desktop

# Inside a private D-Bus session with a fresh, unlocked gnome-keyring, so the keyring
# tests use the real Secret Service.
# The micro-VM tests boot the image `make sandbox-image` built when there is one, else the
# quick test image (about a minute to build; rebuilt when the guest agent changes).
test-go: sandbox-test-image
	@if [ -z "$${AIRLOCK_SANDBOX_IMAGE:-}" ] && [ ! -f build/sandbox-image/manifest.json ] && [ -f $(TEST_IMAGE)/manifest.json ]; then \
		export AIRLOCK_SANDBOX_IMAGE=$$PWD/$(TEST_IMAGE); fi; \
	echo "micro-VM image for the tests: $${AIRLOCK_SANDBOX_IMAGE:-build/sandbox-image}"; \
	AIRLOCK_REQUIRE_KEYRING=1 scripts/with-test-keyring.sh $(GO) test -race -count=1 -timeout 20m ./...

test-frontend: frontend-deps
	cd frontend && npm run check && npm test

smoke: build
	scripts/window-smoke.sh

e2e: build
	scripts/e2e.sh

# An MCP agent end to end: the official TypeScript SDK client against `airlock mcp` (stdio
# and --http), then the official MCP conformance suite against `airlock mcp --http`.
mcp-e2e: build-cli
	scripts/mcp-e2e.sh

# The real Claude Code, Codex and opencode CLIs (npm packages pinned in test/agents-e2e) against the
# scripted fake model APIs of internal/fakemodel: first on the host alone, then each as a
# scheduled task in the real sandbox of a real core, against the real keyring. Plain
# `go test ./...` skips these tests (AIRLOCK_AGENTS_E2E unset).
AGENT_CLIS := test/agents-e2e/node_modules
agents-e2e: $(AGENT_CLIS)/.package-lock.json
	AIRLOCK_REQUIRE_KEYRING=1 AIRLOCK_AGENTS_E2E=$(CURDIR)/$(AGENT_CLIS)/.bin scripts/with-test-keyring.sh $(GO) test -count=1 -timeout 10m \
		-run 'TalksToTheFake|BashRunsInAirlocksSandbox|TestAgentTask' ./test/agents-e2e ./app

$(AGENT_CLIS)/.package-lock.json: test/agents-e2e/package-lock.json test/agents-e2e/package.json
	cd test/agents-e2e && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

## screenshots: PNGs of every page and of the popup, from the real window under Xvfb, in the
## light and the dark theme, into artifacts/screenshots/
screenshots: build
	scripts/screenshots.sh

## bench: Go benchmarks and the comparison scripts (figures go to BENCHMARKS.md)
bench: build
	scripts/bench.sh

## sandbox-image: build the micro-VM image (kernel, initrd, root filesystem with Airlock's
## guest agent) and its manifest into build/sandbox-image/ from Debian packages; root, with
## qemu-system-x86 qemu-utils debootstrap (installed here when missing). Then:
##   airlock sandbox install --manifest build/sandbox-image/manifest.json
sandbox-image:
	@missing=$$(for p in qemu-system-x86 qemu-utils debootstrap; do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then echo "Missing: sudo apt-get install -y $$missing"; exit 1; fi; \
		apt-get install -y -q --no-install-recommends $$missing; fi
	scripts/sandbox-image.sh

## sandbox-test-image: the quick micro-VM image the tests boot (Debian's kernel, busybox
## initramfs, bash/python3/node/git unpacked from Debian packages) into build/sandbox-test-image/
TEST_IMAGE := build/sandbox-test-image
sandbox-test-image: $(TEST_IMAGE)/manifest.json

$(TEST_IMAGE)/manifest.json: scripts/sandbox-test-image.sh scripts/sandbox-manifest.sh \
		$(wildcard cmd/airlock-guest/*.go sandbox/vm/agent/*.go)
	@if [ "$$(id -u)" != 0 ]; then \
		echo "sandbox-test-image: needs root (the image's files must belong to root): the micro-VM tests will skip"; \
	else scripts/sandbox-test-image.sh; fi

clean:
	rm -rf $(BIN) artifacts frontend/dist
