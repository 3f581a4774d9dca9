from pi_coder.cli import main

main()
