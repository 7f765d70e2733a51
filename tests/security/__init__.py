"""The hostile-tenant suite (issue 25): every attack a signed-in user or a stranger can try, refused."""
