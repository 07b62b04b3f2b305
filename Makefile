# The two commands of the README. Each installs what is missing first.
.PHONY: demo test build format

demo:
	bash scripts/setup.sh
	bash scripts/build.sh release
	./build/release/hyperstream demo $(ARGS)

test:
	bash scripts/test.sh

build:
	bash scripts/setup.sh
	bash scripts/build.sh release

format:
	clang-format -i $$(git ls-files '*.c' '*.h')
