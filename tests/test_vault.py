"""services/vault: secrets at rest round-trip, are not readable as plain text, the key is its own setting (never
derived from SECRET_KEY), old keys still decrypt, and a changed, missing or malformed key is a clear VaultError
naming ANONYMIZER_VAULT_KEY (tests/security/test_vault_rotation.py covers rotation and every surface)."""

import pytest
from cryptography.fernet import Fernet, InvalidToken

from anonymizer_app.engine import InputError
from anonymizer_app.services import vault


def test_round_trip_and_ciphertext_hides_the_secret():
    token = vault.encrypt_text("s3cret-token")
    assert "s3cret" not in token
    assert vault.decrypt_text(token) == "s3cret-token"


def test_the_configured_key_encrypts_never_one_derived_from_secret_key(settings):
    key = Fernet.generate_key().decode()
    settings.ANONYMIZER_VAULT_KEY = key
    token = vault.encrypt_text("x")
    assert Fernet(key.encode()).decrypt(token.encode()) == b"x"
    with pytest.raises(InvalidToken):
        Fernet(vault.secret_key_derived_key(settings.SECRET_KEY).encode()).decrypt(token.encode())
    settings.SECRET_KEY = "another-secret-key-" + "y" * 40
    assert vault.decrypt_text(token) == "x"


def test_a_changed_key_is_a_vault_error_naming_the_setting(settings):
    token = vault.encrypt_text("x")
    settings.ANONYMIZER_VAULT_KEY = Fernet.generate_key().decode()
    with pytest.raises(vault.VaultError) as error:
        vault.decrypt_text(token, "the pseudonymization key 'k'")
    assert str(error.value) == (
        "the pseudonymization key 'k' cannot be decrypted with the server's vault key: it was stored under another "
        "key. The operator must set ANONYMIZER_VAULT_KEY back to that key, or add that key to "
        "ANONYMIZER_VAULT_OLD_KEYS (docs/vault.md)")
    assert isinstance(error.value, InputError)  # jobs, pages and the API show it as a user-facing message


def test_old_keys_still_decrypt(settings):
    old = Fernet.generate_key().decode()
    settings.ANONYMIZER_VAULT_KEY = old
    token = vault.encrypt_text("rotated")
    settings.ANONYMIZER_VAULT_KEY = Fernet.generate_key().decode()
    settings.ANONYMIZER_VAULT_OLD_KEYS = [old]
    assert vault.decrypt_text(token) == "rotated"


def test_no_key_outside_development_is_a_vault_error(settings):
    settings.ANONYMIZER_VAULT_KEY = ""
    settings.DEBUG = False
    settings.SECRET_KEY = "a-server-secret-key-" + "z" * 40  # a server: not the development key
    with pytest.raises(vault.VaultError, match=r"^ANONYMIZER_VAULT_KEY is not set: the server has no key"):
        vault.encrypt_text("x")


def test_a_key_is_44_characters_of_url_safe_base64():
    key = vault.make_key()
    assert len(key) == 44 and vault.is_key(key)
    assert not vault.is_key(key[:-2]) and not vault.is_key("") and not vault.is_key("x" * 44)
