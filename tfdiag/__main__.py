from tfdiag.cli import main

raise SystemExit(main())
