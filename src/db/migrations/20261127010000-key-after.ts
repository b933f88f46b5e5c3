// PostgreSQL only: `atrium_key_after(last)`, the sort key fractional-indexing's generateKeyBetween(last, null)
// makes (base-62 digits, base-52 heads of the integer part), so that a create which appends a row after its
// siblings' last key (a section) can make that key in the statement that inserts the row, where the last key is
// read, instead of reading it first, a round trip earlier (docs/decisions.md, one round trip per write). A test
// holds it to the library's answer for every kind of key (test/one-statement-creates.test.ts). SQLite needs
// none: it has no round trips.
import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../column-types.ts';

export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`create or replace function atrium_key_after(a text) returns text language plpgsql immutable as $$
    declare
      digits constant text := '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
      heads constant text := 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
      head_at int;
      integer_length int;
      next_length int;
      integer_part text;
      fraction text;
      carried text := '';
      digit int;
      next_head text;
      midpoint text := '';
    begin
      if a is null then
        return 'a0';
      end if;
      -- The integer part: its head says its length (getIntegerLength).
      head_at := strpos(heads, left(a, 1)) - 1;
      if head_at < 0 then
        raise exception 'invalid order key head: %', a;
      end if;
      integer_length := case when head_at < 26 then 26 - head_at + 1 else head_at - 26 + 2 end;
      integer_part := left(a, integer_length);
      fraction := substr(a, integer_length + 1);
      -- incrementInteger: the last digit that does not overflow goes up one, the ones after it become 0.
      for p in reverse integer_length..2 loop
        digit := strpos(digits, substr(integer_part, p, 1));
        if digit = 62 then
          carried := '0' || carried;
        else
          return left(integer_part, p - 1) || substr(digits, digit + 1, 1) || carried;
        end if;
      end loop;
      if head_at < 51 then
        next_head := substr(heads, head_at + 2, 1);
        next_length := case when head_at + 1 < 26 then 26 - (head_at + 1) + 1 else head_at + 1 - 26 + 2 end;
        return next_head || case when next_length > integer_length then carried || '0' when next_length < integer_length then substr(carried, 2) else carried end;
      end if;
      -- The greatest integer: a key after it in its fraction (midpoint(fraction, null)).
      loop
        digit := case when fraction = '' then 0 else strpos(digits, left(fraction, 1)) - 1 end;
        if 62 - digit > 1 then
          return integer_part || midpoint || substr(digits, (digit + 63) / 2 + 1, 1);
        end if;
        midpoint := midpoint || 'z';
        fraction := substr(fraction, 2);
      end loop;
    end
  $$`.execute(db);
}
