"""``python -m voyager`` runs the same CLI as the ``voyager`` console script."""

from voyager.main import main

if __name__ == "__main__":
    main()
