"""User code: the one loader (`loader`), the import recorder (`project_imports`) and the read tracker (`reads`).

Below `model` (beside `fsio`): every layer that runs user code — the registry factory in `model`, mocks,
handlers, scripts, judges and invokers in `testing` — goes through here. Imports only `errors`.
"""
