from tfdiag.frontends.cli import main

raise SystemExit(main())
