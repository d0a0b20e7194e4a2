from replays.cli import main

main(prog_name="python -m replays")
