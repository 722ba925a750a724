"""``python -m voyager_sessions`` runs the same CLI as the ``voyager`` console script."""

from voyager_sessions.cli.main import main

if __name__ == "__main__":
    main()
