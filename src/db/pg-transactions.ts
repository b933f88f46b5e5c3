// A PostgreSQL transaction without Kysely's TransactionBuilder: `db.transaction().execute(body)` takes a connection
// object of the driver's (postgres-driver.ts RoutedConnection, whose BEGIN waits for its first statement), gives
// `body` a Transaction whose statements go straight to it, commits, and gives the connection back; the same steps
// as Kysely's, in the same order, with the same answers (a body that throws is rolled back, unless the COMMIT said
// the transaction had aborted; a statement sent after the transaction ended is refused).
//
// Why: Kysely's builder wraps every statement of a transaction in its executor three times over (a connection
// provider that queues, one that asserts the transaction is open, then its own), and its lending, BEGIN, COMMIT
// and release are each a promise of their own: 31 of the 78 promises a PATCH made on PostgreSQL, around a
// transaction whose only statement is its final one (bench/promises-per-request.ts, bench/README.md). Here a
// transaction's statements go to the connection through one provider, and its prepared statements and final
// statement skip the executor too (direct-statements.ts), as SQLite's do in its group (sqlite-group-commit.ts).
import { isAbortedTransactionError, Kysely, Transaction, validateTransactionSettings, type CompiledQuery, type DatabaseConnection, type Driver, type KyselyConfig, type QueryResult, type TransactionBuilder, type TransactionSettings } from 'kysely';
import type { Tables } from './tables.ts';
import { directStatements, type DirectRunner } from './direct-statements.ts';

/** What this needs of the driver: a connection object at once, and its return. */
export interface TransactionConnections extends Driver {
  lend(): TransactionConnection;
  takeBack(connection: TransactionConnection): void;
}

/** A connection object of the driver's, with Kysely's transaction steps on it. */
export interface TransactionConnection extends DatabaseConnection {
  begin(settings: TransactionSettings): void;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

/**
 * The statements of one transaction, to its connection, while the transaction lasts; each told to `onQuery`. One
 * at a time, in the order given, as Kysely's provider of a transaction's connection sends them: a body may start
 * several at once (Promise.all), and the connection takes the next only once the one before has answered.
 */
class TransactionStatements implements DatabaseConnection, DirectRunner {
  readonly #connection: TransactionConnection;
  readonly #onQuery: ((query: CompiledQuery) => void) | undefined;
  /** A statement is running: the next wait in #waiting, each started by the one before as it answers. */
  #busy = false;
  readonly #waiting: Array<() => void> = [];
  ended = false;

  constructor(connection: TransactionConnection, onQuery: ((query: CompiledQuery) => void) | undefined) {
    this.#connection = connection;
    this.#onQuery = onQuery;
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // Kysely's own message for the same mistake: a statement of a body that went on after the body returned.
    if (this.ended) return Promise.reject(new Error('Transaction is already committed or rolled back'));
    this.#onQuery?.(query);
    if (!this.#busy) return this.#run(query);
    return new Promise<void>((resolve) => this.#waiting.push(resolve)).then(() => this.#run(query));
  }

  #run<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    this.#busy = true;
    const answered = this.#connection.executeQuery<R>(query);
    answered.then(this.#next, this.#next);
    return answered;
  }

  readonly #next = (): void => {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#busy = false;
  };

  rows(query: CompiledQuery): Promise<unknown[]> {
    return this.executeQuery(query).then((result) => result.rows);
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported by this driver');
  }
}

/** PostgreSQL's Kysely: its `transaction()` runs as above; everything else is Kysely's own. */
export class PostgresKysely extends Kysely<Tables> {
  readonly #config: KyselyConfig;
  readonly #connections: TransactionConnections;
  readonly #onQuery: ((query: CompiledQuery) => void) | undefined;

  /** `config.dialect.driver`: the driver Kysely makes from the dialect as it starts (postgres-driver.ts). */
  constructor(config: KyselyConfig & { dialect: { driver?: TransactionConnections } }, onQuery?: (query: CompiledQuery) => void) {
    super(config);
    this.#config = config;
    this.#connections = config.dialect.driver!;
    this.#onQuery = onQuery;
  }

  override transaction(): TransactionBuilder<Tables> {
    return this.#builder({});
  }

  #builder(settings: TransactionSettings): TransactionBuilder<Tables> {
    const builder = {
      execute: <T>(body: (tx: Kysely<Tables>) => Promise<T>): Promise<T> => this.#run(settings, body),
      setIsolationLevel: (isolationLevel: TransactionSettings['isolationLevel']) => this.#builder({ ...settings, isolationLevel }),
      setAccessMode: (accessMode: TransactionSettings['accessMode']) => this.#builder({ ...settings, accessMode }),
    };
    return builder as unknown as TransactionBuilder<Tables>;
  }

  async #run<T>(settings: TransactionSettings, body: (tx: Kysely<Tables>) => Promise<T>): Promise<T> {
    validateTransactionSettings(settings);
    const connection = this.#connections.lend();
    const statements = new TransactionStatements(connection, this.#onQuery);
    try {
      connection.begin(settings);
      const executor = this.getExecutor().withConnectionProvider({ provideConnection: (consume) => consume(statements) });
      const tx = new Transaction<Tables>({ config: this.#config, executor, dialect: this.#config.dialect, driver: this.#connections });
      directStatements.set(tx, statements);
      try {
        const result = await body(tx);
        await connection.commit();
        return result;
      } catch (err) {
        // Aborted at its COMMIT, the transaction is over on the server already (Kysely's builder does the same).
        if (!isAbortedTransactionError(err)) await connection.rollback();
        throw err;
      }
    } finally {
      statements.ended = true;
      this.#connections.takeBack(connection);
    }
  }
}
