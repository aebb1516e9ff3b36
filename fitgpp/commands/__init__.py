"""One module per ``fitgpp`` subcommand (see ``fitgpp.cli``)."""
