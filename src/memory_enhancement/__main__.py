from memory_enhancement.cli import main

main()
