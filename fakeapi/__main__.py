from fakeapi.cli import main

raise SystemExit(main())
