"""``python -m ai.content WORD...``: the hashed word-list entry for each word."""

from ai.content.words import main

raise SystemExit(main())
