"""Pages of the hierarchy editor, one module per concern (urls.py maps each URL to one of them). Everything is
owner-scoped: another user's hierarchy, dataset or editing session is a 404 on every URL; every view needs a
login. What they compute from stored objects is ``hierarchy_editor.services`` (cached per account) and
``hierarchy_editor.building``; the editing sessions are ``hierarchy_editor.drafts``.

- common: owner-scoped lookups of a dataset column, the summaries of a parsed hierarchy the pages show
- library: the list of a user's hierarchies, one hierarchy's page, its deletion
- files: uploading a hierarchy file (and resolving its contradictory rows), downloading and exporting it
- columns: the hierarchy of a dataset column and its actions (upload, pick, default, edit the default)
- builders: the automatic builders' page and its live preview (JSON)
- editor: starting an editing session and the tree editor's page; editor_api and editor_ops: its JSON
  endpoints (paging, search, checks, sunburst, save; the edits)
- jsonapi: the JSON endpoints' plumbing on Django REST framework (authentication, errors, body limits)
"""
