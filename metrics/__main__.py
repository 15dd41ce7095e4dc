from .cli import leave, main

leave(main())
