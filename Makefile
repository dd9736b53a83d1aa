.PHONY: demo test bootstrap bench

# Install everything and start the demo (server + worker); prints the URL and the logins.
demo:
	scripts/dev.sh demo

# Install everything and run the whole test suite (ruff, mypy, pytest).
test:
	scripts/dev.sh test

bootstrap:
	scripts/dev.sh bootstrap
