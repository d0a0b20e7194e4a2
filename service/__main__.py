from service.entry import main

main()
