# The two commands of README's Quick start (demo, test), and the release artefacts (dist).
.PHONY: demo test layers setup dist

setup:
	scripts/setup.sh

demo: setup
	mkdir -p out
	.venv/bin/shotctl capture demo/index.html --annotate --browser headless -o out/demo.jpg

test:
	scripts/test.sh

# The shape check alone (make test runs it too): import circles, layering, long hot-path functions.
layers: setup
	.venv/bin/python scripts/check_layers.py

# abi3 manylinux_2_28 wheels (x86_64; aarch64 when its Rust target can be installed) and the
# sdist into dist/, then a check of what they carry.
dist: setup
	.venv/bin/python scripts/dist.py --out dist
	.venv/bin/python scripts/check_dist.py dist
