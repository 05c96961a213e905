-- +goose Up
-- Account keys fold A-Z only (pircan.FoldAccount), no longer []\~ as
-- rfc1459 does: services that compare accounts by ascii hold `vic[1` and
-- `vic{1` as two accounts, and they must be two agents. The finer fold of
-- a distinct key stays distinct, so no key collides. login_attempts keep
-- their keys: they only count the last hour's attempts.
UPDATE agent_accounts SET account_folded = translate(account, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz');
UPDATE owners SET account_folded = translate(account, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz');
UPDATE portal_sessions SET account_folded = translate(account, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
WHERE account IS NOT NULL;
UPDATE owner_bindings SET owner_folded = translate(owner_account, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz');

-- +goose Down
UPDATE agent_accounts SET account_folded = translate(account, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ[]\~', 'abcdefghijklmnopqrstuvwxyz{}|^');
UPDATE owners SET account_folded = translate(account, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ[]\~', 'abcdefghijklmnopqrstuvwxyz{}|^');
UPDATE portal_sessions SET account_folded = translate(account, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ[]\~', 'abcdefghijklmnopqrstuvwxyz{}|^')
WHERE account IS NOT NULL;
UPDATE owner_bindings SET owner_folded = translate(owner_account, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ[]\~', 'abcdefghijklmnopqrstuvwxyz{}|^');
