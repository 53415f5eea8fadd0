# The two entry points of the README. Both install what is missing and build first.
#   make run [PROGRAM=examples/hello.c] [ARGS="--stats"]   run a program inside the weights
#   make test                                              run the test suite
PROGRAM ?=
ARGS ?=

.PHONY: run test build
build:
	./scripts/setup.sh

run: build
	./build/rvformer run $(ARGS) $(PROGRAM)

test: build
	cd build && ctest --output-on-failure -j 2
