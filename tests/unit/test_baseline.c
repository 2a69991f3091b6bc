/*
 * test_baseline.c: baselines on a real file system. Every hostile file (truncated, wrong types,
 * NaN and infinities, negative and fractional counts, missing fields, huge arrays, deep nesting,
 * binary garbage, oversized) is rejected with a message naming the file and the JSON path, never
 * a crash or a huge allocation (CI runs this under ASan). Saving merges by id, refuses to replace
 * a broken file, and a save killed at any moment leaves a readable baseline. A folder pinned for
 * work by its descriptor (bench__dir_pin) stays that folder whatever is renamed or linked later.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/internal.h"
#include "probes/probes.h"

static char tmpdir[64];

static void path_in(char *buf, size_t len, const char *dir, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

static void test_good_fixture_loads(void **state)
{
    (void)state;
    char path[512], msg[512];
    path_in(path, sizeof path, FIXTURE_DIR, "good.json");
    bench__saved s;
    assert_int_equal(bench__saved_load(path, &s, msg, sizeof msg), 0);
    assert_int_equal(s.n, 2);
    const bench__entry *a = bench__saved_find(&s, "g/a");
    assert_non_null(a);
    assert_int_equal(a->status, BENCH__OK);
    assert_int_equal(a->nsamples, 3);
    assert_true(a->totals_ns[2] == 3100 && a->iters[1] == 20);
    assert_true(a->bytes_per_iter == 64);
    assert_int_equal(bench__saved_find(&s, "g/b")->status, BENCH__SKIPPED);
    assert_null(bench__saved_find(&s, "g/c"));
    assert_string_equal(s.ctx.cpu_brand, "Fixture CPU");
    assert_int_equal(s.ctx.cores, 2);
    bench__saved_destroy(&s);
}

/* A file that records how the benchmarks' files were compiled (context.benchmark_builds) loads
 * like one that does not. */
static void test_benchmark_builds_load(void **state)
{
    (void)state;
    char path[512], msg[512] = "";
    path_in(path, sizeof path, FIXTURE_DIR, "good_builds.json");
    bench__saved s;
    int rc = bench__saved_load(path, &s, msg, sizeof msg);
    if (rc != 0)
        print_error("good_builds.json: %s\n", msg);
    assert_int_equal(rc, 0);
    assert_int_equal(s.n, 2);
    bench__saved_destroy(&s);
}

/* good.json with `explanation` (an object's members, or NULL for none) added to its entry g/a,
 * loaded: 0 or the error, its message in msg. */
static int load_with_explanation(const char *members, char *msg, size_t len)
{
    char path[512], out[512];
    path_in(path, sizeof path, FIXTURE_DIR, "good.json");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *at = strstr(text, "\"status\": \"ok\",");
    assert_non_null(at);
    path_in(out, sizeof out, tmpdir, "explained.json");
    f = fopen(out, "w");
    assert_non_null(f);
    fwrite(text, 1, (size_t)(at - text), f);
    if (members)
        fprintf(f, "\"explanation\": {\"mode\": \"time\", \"explained\": true, "
                   "\"message\": \"\", \"samples\": [2000, 1900]%s%s},\n", *members ? ", " : "",
                members);
    fputs(at, f);
    fclose(f);
    bench__saved s;
    int rc = bench__saved_load(out, &s, msg, len);
    if (rc == 0)
        bench__saved_destroy(&s);
    return rc;
}

/* The results' versioning rule (docs/results-format.md, "Versioning"): a field added within
 * schema_version 1 is optional, so a file written before it existed reads as before and one
 * with it reads too, checked like any other; a key the schema does not know is refused, naming
 * the version. explanation.machine_samples, added after the first files with an explanation were
 * written, is such a field. */
static void test_added_fields_are_optional_within_version_1(void **state)
{
    (void)state;
    char msg[512] = "";
    int rc = load_with_explanation("", msg, sizeof msg);
    if (rc != 0)
        print_error("without machine_samples: %s\n", msg);
    assert_int_equal(rc, 0);
    rc = load_with_explanation("\"machine_samples\": [599, 725]", msg, sizeof msg);
    if (rc != 0)
        print_error("with machine_samples: %s\n", msg);
    assert_int_equal(rc, 0);
    assert_int_not_equal(load_with_explanation("\"machine_samples\": [599]", msg, sizeof msg),
                         0);
    assert_non_null(strstr(msg, "machine_samples"));
    assert_int_not_equal(load_with_explanation("\"kernel_samples\": [599, 725]", msg, sizeof msg),
                         0);
    assert_non_null(strstr(msg, "explanation.kernel_samples: unknown key (not part of "
                                "schema_version 1)"));
}

static void test_hostile_fixtures_rejected(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        const char *expect; /* substring of the message */
    } cases[] = {
        {"truncated.json", "not valid JSON"},
        {"wrong_type_iterations.json", "benchmarks[0].samples.iterations: missing or not an array"},
        {"string_sample.json", "benchmarks[0].samples.totals_ns[1]"},
        {"nan_literal.json", "not valid JSON"},
        {"infinite.json", "benchmarks[0].samples.totals_ns[2]"},
        {"negative_count.json", "benchmarks[0].samples.iterations[0]"},
        {"fractional_count.json", "benchmarks[0].samples.iterations[0]"},
        {"negative_time.json", "benchmarks[0].samples.totals_ns[0]"},
        {"missing_samples.json", "benchmarks[0].samples: missing"},
        {"missing_benchmarks.json", "benchmarks: missing"},
        {"missing_version.json", "schema_version: missing"},
        {"length_mismatch.json", "differ in length"},
        {"empty_samples.json", "expected 1 to 100000 samples"},
        {"future_version.json", "version 2 is not supported"},
        {"not_object.json", "$: expected an object"},
        {"duplicate_id.json", "'g/a' appears more than once"},
        {"control_char_id.json", "benchmarks[0].id"},
        {"empty_id.json", "benchmarks[0].id"},
        {"bad_status.json", "benchmarks[0].status"},
        {"wrong_context_type.json", "context.compiler: expected a string"},
        {"bad_noise.json", "benchmarks[0].noise: runs"},
        {"huge_throughput.json", "throughput.bytes_per_iteration"},
        {"trailing_garbage.json", "unexpected text after the JSON value"},
        {"empty.json", "not valid JSON"},
        {"binary_garbage.bin", "NUL byte"},
        {"nul_inside.json", "NUL byte"},
        {"does_not_exist.json", "cannot open"},
        /* every field is checked against the schema, also those the comparison does not read */
        {"outlier_string.json", "benchmarks[0].outliers.low_mild: expected an integer"},
        {"unknown_key.json", "benchmarks[0].speedup: unknown key"},
        {"bad_estimate.json", "benchmarks[0].estimates.median.lower: -3 is below the minimum 0"},
        {"missing_context_field.json", "context.clock: missing"},
        {"bad_build.json", "context.benchmark_builds[0].optimize: expected a boolean"},
        /* a key twice: rejected wherever it is, naming it */
        {"duplicate_key.json", "benchmarks[0].rounds: duplicate key"},
        {"duplicate_key_nested.json", "benchmarks[0].outliers.low_mild: duplicate key"},
        /* numbers that feed a verdict must make sense, not only have the right type */
        {"absurd_noise_mean.json", "benchmarks[0].noise: log_median_mean -100 is"},
        {"absurd_noise_sd.json", "benchmarks[0].noise: log_median_sd: expected a number in [0, 1]"},
        {"zero_time.json", "benchmarks[0].samples.totals_ns[0]"},
        {"outliers_over_samples.json", "benchmarks[0].outliers: more outliers than samples"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[512], msg[512] = "";
        path_in(path, sizeof path, FIXTURE_DIR, cases[i].file);
        bench__saved s;
        int rc = bench__saved_load(path, &s, msg, sizeof msg);
        if (rc == 0 || !strstr(msg, cases[i].expect) || !strstr(msg, cases[i].file)) {
            print_error("%s: rc %d, message '%s', expected '%s'\n", cases[i].file, rc, msg,
                        cases[i].expect);
            fail();
        }
        assert_int_equal(s.n, 0);
        assert_null(s.entries);
    }
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_generated_hostile_files(void **state)
{
    (void)state;
    char path[512], msg[512];
    bench__saved s;

    /* 100001 samples: one over the limit, rejected before anything is allocated for them */
    path_in(path, sizeof path, tmpdir, "huge.json");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"schema_version\":1,\"benchmarks\":[{\"id\":\"g/a\",\"status\":\"ok\",\"samples\":"
          "{\"iterations\":[", f);
    for (int i = 0; i < 100001; i++)
        fputs(i ? ",1" : "1", f);
    fputs("],\"totals_ns\":[1]}}]}", f);
    fclose(f);
    assert_int_not_equal(bench__saved_load(path, &s, msg, sizeof msg), 0);
    assert_non_null(strstr(msg, "expected 1 to 100000 samples"));

    /* nesting 100000 deep: cJSON's nesting limit stops it, no stack overflow */
    path_in(path, sizeof path, tmpdir, "deep.json");
    f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 100000; i++)
        fputc('[', f);
    for (int i = 0; i < 100000; i++)
        fputc(']', f);
    fclose(f);
    assert_int_not_equal(bench__saved_load(path, &s, msg, sizeof msg), 0);
    assert_non_null(strstr(msg, "nested deeper"));

    /* a 17 MiB file (sparse): refused by size, never read into memory */
    path_in(path, sizeof path, tmpdir, "big.json");
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), 17L * 1024 * 1024), 0);
    fclose(f);
    assert_int_not_equal(bench__saved_load(path, &s, msg, sizeof msg), 0);
    assert_non_null(strstr(msg, "limit"));

    /* a directory is not a baseline */
    assert_int_not_equal(bench__saved_load(tmpdir, &s, msg, sizeof msg), 0);
    assert_non_null(strstr(msg, "not a regular file"));
    (void)write_text;
}

/* ---- saving ---- */

static void dummy(bench_t *b)
{
    (void)b;
}

static bench_desc desc = {.group = "g", .name = "x", .fn = dummy};

typedef struct fake {
    bench__instance inst;
    bench__result r;
    double iters[4];
    double totals[4];
} fake;

static void make_fake(fake *f, const char *id, double per_iter)
{
    memset(f, 0, sizeof *f);
    f->inst.desc = &desc;
    snprintf(f->inst.id, sizeof f->inst.id, "%s", id);
    for (int i = 0; i < 4; i++) {
        f->iters[i] = (i + 1) * 10;
        f->totals[i] = f->iters[i] * per_iter;
    }
    f->r.inst = &f->inst;
    f->r.status = BENCH__OK;
    f->r.nsamples = 4;
    f->r.iters = f->iters;
    f->r.totals_ns = f->totals;
    f->r.est.median.point = per_iter;
    f->r.stop_reason = "precision";
    /* What a real run records, so the saved file is valid against the schema. */
    f->r.settings = (bench__settings){.warm_up_time = 0.1, .measurement_time = 1,
                                      .sample_size = 4, .target_precision = 0.01, .rounds = 1};
    f->r.sampling_used = BENCH_SAMPLING_LINEAR;
    f->r.warm_up_iters = 10;
    f->r.rounds = 1;
}

static bench__context test_context(void)
{
    bench__run_options o;
    memset(&o, 0, sizeof o);
    o.nresamples = 100;
    o.confidence_level = 0.95;
    bench__context c;
    bench__context_collect(&c, &o);
    bench__probes_context(&c);
    return c;
}

static double median_of(const bench__saved *s, const char *id)
{
    const bench__entry *e = bench__saved_find(s, id);
    return e ? bench__entry_median(e) : -1;
}

static void test_save_merges_by_id(void **state)
{
    (void)state;
    char path[512], msg[512];
    path_in(path, sizeof path, tmpdir, "merge.json");
    unlink(path);
    bench__context ctx = test_context();
    fake f[3];
    make_fake(&f[0], "g/a", 5);
    make_fake(&f[1], "g/b", 7);
    bench__result two[2] = {f[0].r, f[1].r};
    assert_int_equal(bench__baseline_save(path, &ctx, two, 2, msg, sizeof msg), 0);

    make_fake(&f[2], "g/b", 9); /* a filtered run: only g/b */
    assert_int_equal(bench__baseline_save(path, &ctx, &f[2].r, 1, msg, sizeof msg), 0);
    bench__saved s;
    assert_int_equal(bench__saved_load(path, &s, msg, sizeof msg), 0);
    assert_int_equal(s.n, 2);
    assert_true(median_of(&s, "g/a") == 5); /* kept */
    assert_true(median_of(&s, "g/b") == 9); /* replaced */
    bench__saved_destroy(&s);
}

static void test_save_refuses_to_replace_a_broken_file(void **state)
{
    (void)state;
    char path[512], msg[512];
    path_in(path, sizeof path, tmpdir, "broken.json");
    write_text(path, "{\"schema_version\": 1, \"benchmarks\": [tru");
    bench__context ctx = test_context();
    fake f;
    make_fake(&f, "g/a", 5);
    assert_int_not_equal(bench__baseline_save(path, &ctx, &f.r, 1, msg, sizeof msg), 0);
    assert_non_null(strstr(msg, "refusing to replace"));
    FILE *fp = fopen(path, "r");
    char buf[128] = "";
    assert_non_null(fgets(buf, sizeof buf, fp));
    fclose(fp);
    assert_string_equal(buf, "{\"schema_version\": 1, \"benchmarks\": [tru");
}

/* A child saves two alternating baselines as fast as it can; it is killed at random moments.
 * After every kill the file must load, with one of the two contents, and no write may ever
 * leave it half-written. */
static void test_killed_save_leaves_a_valid_baseline(void **state)
{
    (void)state;
    char path[512], msg[512];
    path_in(path, sizeof path, tmpdir, "killed.json");
    unlink(path);
    enum { N = 300 };
    static fake fs[N];
    static bench__result rs[2][N];
    char id[32];
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "g/b%03d", i);
        make_fake(&fs[i], id, 5);
        rs[0][i] = fs[i].r;
        rs[1][i] = fs[i].r;
    }
    static double totals_b[N][4];
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < 4; k++)
            totals_b[i][k] = fs[i].iters[k] * 8;
        rs[1][i].totals_ns = totals_b[i];
    }
    bench__context ctx = test_context();
    assert_int_equal(bench__baseline_save(path, &ctx, rs[0], N, msg, sizeof msg), 0);
    srand(12345);
    for (int round = 0; round < 15; round++) {
        pid_t pid = fork();
        if (pid == 0) {
            for (int k = 0;; k++)
                bench__baseline_save(path, &ctx, rs[k % 2], N, msg, sizeof msg);
        }
        struct timespec ts = {0, (long)(1 + rand() % 40) * 1000000L};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        bench__saved s;
        int rc = bench__saved_load(path, &s, msg, sizeof msg);
        if (rc != 0) {
            print_error("round %d: %s\n", round, msg);
            fail();
        }
        assert_int_equal(s.n, N);
        double m = median_of(&s, "g/b000");
        assert_true(m == 5 || m == 8);
        bench__saved_destroy(&s);
    }
}

/* Names of temporary files (NAME.tmp.PID.XXXXXX, or any NAME.tmp...) in dir. */
static int count_tmps(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, ".tmp") != NULL;
    if (d)
        closedir(d);
    return n;
}

/* A process killed by SIGTERM while it writes a large file leaves no temporary file: the
 * handler removes it and the process still dies of the signal. */
static void test_terminated_write_leaves_no_temp(void **state)
{
    (void)state;
    char dir[512], path[600], msg[256];
    path_in(dir, sizeof dir, tmpdir, "term");
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/big.json", dir);
    size_t len = 96u << 20;
    char *text = malloc(len + 1);
    assert_non_null(text);
    memset(text, ' ', len);
    text[len] = '\0';
    bool caught = false;
    for (int attempt = 0; attempt < 5 && !caught; attempt++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(bench__write_atomic(path, text, msg, sizeof msg) == 0 ? 0 : 1);
        /* Wait for the temporary file to appear, then terminate the writer mid-write. */
        for (int i = 0; i < 20000 && count_tmps(dir) == 0; i++) {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
        caught = count_tmps(dir) > 0 && kill(pid, SIGTERM) == 0;
        int status = 0;
        waitpid(pid, &status, 0);
        if (caught && WIFSIGNALED(status)) {
            assert_int_equal(WTERMSIG(status), SIGTERM);
            assert_int_equal(count_tmps(dir), 0);
        } else {
            caught = false; /* it finished first: try again */
            unlink(path);
        }
    }
    free(text);
    if (!caught)
        skip(); /* the machine wrote 96 MiB faster than it could be caught */
}

/* Runs saving different benchmarks into one baseline at the same moment all keep theirs. */
static void test_concurrent_saves_lose_nothing(void **state)
{
    (void)state;
    enum { WRITERS = 4, ROUNDS = 15 };
    char path[512], msg[512];
    bench__context ctx = test_context();
    static fake fs[WRITERS];
    char id[32];
    for (int w = 0; w < WRITERS; w++) {
        snprintf(id, sizeof id, "g/w%d", w);
        make_fake(&fs[w], id, 5 + w);
    }
    for (int round = 0; round < ROUNDS; round++) {
        snprintf(path, sizeof path, "%s/together%d.json", tmpdir, round);
        int go[2];
        assert_int_equal(pipe(go), 0);
        pid_t pids[WRITERS];
        for (int w = 0; w < WRITERS; w++) {
            pids[w] = fork();
            if (pids[w] == 0) {
                char c;
                close(go[1]);
                if (read(go[0], &c, 1) < 0) /* returns 0 when the parent closes: go */
                    _exit(2);
                _exit(bench__baseline_save(path, &ctx, &fs[w].r, 1, msg, sizeof msg) ? 1 : 0);
            }
        }
        close(go[0]);
        close(go[1]);
        for (int w = 0; w < WRITERS; w++) {
            int status;
            waitpid(pids[w], &status, 0);
            assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        bench__saved s;
        assert_int_equal(bench__saved_load(path, &s, msg, sizeof msg), 0);
        if (s.n != WRITERS) {
            print_error("round %d: %zu of %d entries kept\n", round, s.n, WRITERS);
            fail();
        }
        bench__saved_destroy(&s);
    }
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/harness-baseline-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

/* A folder opened and checked once is reached through its descriptor afterwards: renaming it
 * and putting a link in its place changes nothing; one others may write, another user's, a link
 * with O_NOFOLLOW and a missing one are refused, each with its reason. */
static void test_pinned_folder(void **state)
{
    (void)state;
    char dir[128], moved[128], elsewhere[128], pinned[64], file[128], why[256];
    path_in(dir, sizeof dir, tmpdir, "pin");
    path_in(moved, sizeof moved, tmpdir, "pin-moved");
    path_in(elsewhere, sizeof elsewhere, tmpdir, "pin-elsewhere");
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(mkdir(elsewhere, 0700), 0);
    int fd = -1;
    assert_int_equal(bench__dir_pin(AT_FDCWD, dir, O_NOFOLLOW, &fd, pinned, sizeof pinned, why,
                                    sizeof why), 0);
    assert_true(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC));
    assert_int_equal(rename(dir, moved), 0);
    assert_int_equal(symlink(elsewhere, dir), 0);
    snprintf(file, sizeof file, "%s/x.json", pinned);
    char msg[512];
    assert_int_equal(bench__write_atomic(file, "{}", msg, sizeof msg), 0);
    char there[160];
    path_in(there, sizeof there, moved, "x.json");
    struct stat st;
    assert_int_equal(stat(there, &st), 0);
    path_in(there, sizeof there, elsewhere, "x.json");
    assert_int_not_equal(stat(there, &st), 0);
    close(fd);
    /* The link in its place, not followed; followed without O_NOFOLLOW. */
    assert_int_equal(bench__dir_pin(AT_FDCWD, dir, O_NOFOLLOW, &fd, pinned, sizeof pinned, why,
                                    sizeof why), BENCH_EIO);
    assert_non_null(strstr(why, "symbolic link"));
    assert_int_equal(fd, -1);
    assert_int_equal(bench__dir_pin(AT_FDCWD, dir, 0, &fd, pinned, sizeof pinned, why,
                                    sizeof why), 0);
    close(fd);
    assert_int_equal(chmod(moved, 01777), 0);
    assert_int_equal(bench__dir_pin(AT_FDCWD, moved, O_NOFOLLOW, &fd, pinned, sizeof pinned, why,
                                    sizeof why), BENCH_EINVAL);
    assert_non_null(strstr(why, "other users may write it (mode 1777)"));
    assert_int_equal(chmod(moved, 0700), 0);
    if (geteuid() == 0) {
        assert_int_equal(chown(moved, 54321, 54321), 0);
        assert_int_equal(bench__dir_pin(AT_FDCWD, moved, O_NOFOLLOW, &fd, pinned, sizeof pinned,
                                        why, sizeof why), BENCH_EINVAL);
        assert_non_null(strstr(why, "owned by another user (uid 54321)"));
    }
    path_in(there, sizeof there, tmpdir, "pin-missing");
    assert_int_equal(bench__dir_pin(AT_FDCWD, there, O_NOFOLLOW, &fd, pinned, sizeof pinned, why,
                                    sizeof why), BENCH_EUNAVAIL);
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_fixture_loads),
        cmocka_unit_test(test_benchmark_builds_load),
        cmocka_unit_test(test_added_fields_are_optional_within_version_1),
        cmocka_unit_test(test_hostile_fixtures_rejected),
        cmocka_unit_test(test_generated_hostile_files),
        cmocka_unit_test(test_save_merges_by_id),
        cmocka_unit_test(test_save_refuses_to_replace_a_broken_file),
        cmocka_unit_test(test_killed_save_leaves_a_valid_baseline),
        cmocka_unit_test(test_terminated_write_leaves_no_temp),
        cmocka_unit_test(test_concurrent_saves_lose_nothing),
        cmocka_unit_test(test_pinned_folder),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
