from shotbridge.cli import main

main()
