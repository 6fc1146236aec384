# The two commands of README's Quick start.
.PHONY: demo test setup

setup:
	scripts/setup.sh

demo: setup
	mkdir -p out
	.venv/bin/shotctl capture demo/index.html --annotate --browser headless -o out/demo.jpg

test:
	scripts/test.sh
