from gemmlab.cli import main

main()
