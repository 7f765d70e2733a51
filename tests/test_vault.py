"""services/vault: secrets at rest round-trip, are not readable as plain text, and a changed key is a clear error."""

import pytest
from cryptography.fernet import Fernet

from anonymizer_app.services import vault


def test_round_trip_and_ciphertext_hides_the_secret():
    token = vault.encrypt_text("s3cret-token")
    assert "s3cret" not in token
    assert vault.decrypt_text(token) == "s3cret-token"


def test_a_changed_key_is_a_vault_error(settings):
    token = vault.encrypt_text("x")
    settings.ANONYMIZER_VAULT_KEY = Fernet.generate_key().decode()
    with pytest.raises(vault.VaultError, match="vault key"):
        vault.decrypt_text(token)


def test_old_keys_still_decrypt(settings):
    old = Fernet.generate_key().decode()
    settings.ANONYMIZER_VAULT_KEY = old
    token = vault.encrypt_text("rotated")
    settings.ANONYMIZER_VAULT_KEY = Fernet.generate_key().decode()
    settings.ANONYMIZER_VAULT_OLD_KEYS = [old]
    assert vault.decrypt_text(token) == "rotated"
