// PostgreSQL only: `atrium_key_between(a, b)`, the sort key fractional-indexing's generateKeyBetween(a, b) makes
// (either may be null: before the first, after the last), so that a create placed between two rows (a lesson page
// after another) makes its key in the statement that reads the neighbours and inserts the row, as
// `atrium_key_after` (migration 20261127010000) does for the key after the last: one round trip instead of two
// (docs/decisions.md, one round trip per write). A test holds it to the library for every kind of pair
// (test/one-statement-creates-content.test.ts). Keys compare by byte (`collate "C"`), as the library's do.
import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../column-types.ts';

export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  // midpoint(a, b): a key of base-62 digits strictly between two fractions (b null: after a), as the library's
  // recursive midpoint, unrolled.
  await sql`create or replace function atrium_key_midpoint(a text, b text) returns text language plpgsql immutable as $$
    declare
      digits constant text := '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
      made text := '';
      n int;
      digit_a int;
      digit_b int;
    begin
      loop
        if b is not null then
          -- The common prefix (a padded with zeros) is kept as it is.
          n := 0;
          while n < length(b) and coalesce(nullif(substr(a, n + 1, 1), ''), '0') = substr(b, n + 1, 1) loop
            n := n + 1;
          end loop;
          made := made || left(b, n);
          a := substr(a, n + 1);
          b := substr(b, n + 1);
        end if;
        digit_a := case when a = '' then 0 else strpos(digits, left(a, 1)) - 1 end;
        digit_b := case when b is null then 62 else strpos(digits, left(b, 1)) - 1 end;
        if digit_b - digit_a > 1 then
          return made || substr(digits, (digit_a + digit_b + 1) / 2 + 1, 1);
        end if;
        if b is not null and length(b) > 1 then
          return made || left(b, 1);
        end if;
        made := made || substr(digits, digit_a + 1, 1);
        a := substr(a, 2);
        b := null;
      end loop;
    end
  $$`.execute(db);

  // The length of a key's integer part, which its head (A-Z, a-z) says (getIntegerLength).
  await sql`create or replace function atrium_key_integer_length(k text) returns int language plpgsql immutable as $$
    declare
      head_at int := strpos('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', left(k, 1)) - 1;
    begin
      if head_at < 0 then
        raise exception 'invalid order key head: %', k;
      end if;
      return case when head_at < 26 then 26 - head_at + 1 else head_at - 26 + 2 end;
    end
  $$`.execute(db);

  await sql`create or replace function atrium_key_between(a text, b text) returns text language plpgsql immutable as $$
    declare
      digits constant text := '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
      heads constant text := 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
      integer_length int;
      next_head text;
      int_a text;
      int_b text;
      carried text := '';
      digit int;
      next_key text;
    begin
      if b is null then
        return atrium_key_after(a);
      end if;
      if a is not null and a collate "C" > b collate "C" then
        return atrium_key_between(b, a);
      end if;
      integer_length := atrium_key_integer_length(b);
      int_b := left(b, integer_length);
      if a is null then
        -- The smallest integer: a key before b in its fraction.
        if int_b = 'A' || repeat('0', 26) then
          return int_b || atrium_key_midpoint('', substr(b, integer_length + 1));
        end if;
        -- b has a fraction: its integer part alone comes before it.
        if int_b collate "C" < b collate "C" then
          return int_b;
        end if;
        -- decrementInteger: the last digit that does not underflow goes down one, the ones after it (carried) become z.
        for p in reverse integer_length..2 loop
          digit := strpos(digits, substr(int_b, p, 1)) - 1;
          if digit = 0 then
            carried := 'z' || carried;
          else
            return left(int_b, p - 1) || substr(digits, digit, 1) || carried;
          end if;
        end loop;
        -- The head before b's, its integer part one digit longer or shorter (getIntegerLength).
        if left(b, 1) = 'A' then
          raise exception 'cannot decrement any more: %', b;
        end if;
        next_head := substr(heads, strpos(heads, left(b, 1)) - 1, 1);
        return next_head || case sign(atrium_key_integer_length(next_head) - integer_length) when 1 then carried || 'z' when -1 then substr(carried, 2) else carried end;
      end if;
      integer_length := atrium_key_integer_length(a);
      int_a := left(a, integer_length);
      if int_a = int_b then
        return int_a || atrium_key_midpoint(substr(a, integer_length + 1), substr(b, length(int_b) + 1));
      end if;
      -- The next integer after a's (incrementInteger: a's integer part is not the greatest, since b's is
      -- greater), if it comes before b; else a key after a in its fraction.
      next_key := atrium_key_after(int_a);
      if next_key collate "C" < b collate "C" then
        return next_key;
      end if;
      return int_a || atrium_key_midpoint(substr(a, integer_length + 1), null);
    end
  $$`.execute(db);
}
