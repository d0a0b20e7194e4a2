from bot_sdk.cli import main

main(prog_name="python -m bot_sdk")
