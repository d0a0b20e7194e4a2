from workers.cli import main

main()
