# The source revision a benchmark program is built from, embedded at build time, so results
# record the revision of the program (context.git_revision) and not that of whatever checkout it
# happens to run in.
#
# As a module (include()), it defines
#   harness_embed_revision(TARGET SCOPE SOURCE_DIR)
# which makes TARGET's C files (SCOPE PRIVATE), or those of whatever links TARGET (SCOPE
# INTERFACE, e.g. the imported harness::harness), see BENCH_REVISION_FILE: a header in this build
# tree that defines BENCH_BUILD_REVISION, the revision of the git checkout holding SOURCE_DIR
# ("git rev-parse --short=12 HEAD", with "-dirty" when tracked files have changes). bench.h
# includes that header, and BENCH_FN records the revision in each benchmark file. The header is
# rewritten by the target harness_revision at every build, but only when the revision changed, so
# a commit or a first edit rebuilds the files that include bench.h and nothing else does. Outside
# a git checkout (or without git) the header defines nothing and the revision is unknown ("").
#
# As a script (cmake -DSOURCE_DIR=... -DOUTPUT=... -P harnessRevision.cmake), it writes that
# header.
if(CMAKE_SCRIPT_MODE_FILE)
    set(_rev "")
    find_program(_git git)
    if(_git)
        execute_process(COMMAND "${_git}" -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
            OUTPUT_VARIABLE _rev RESULT_VARIABLE _rc OUTPUT_STRIP_TRAILING_WHITESPACE
            ERROR_QUIET)
        if(_rc EQUAL 0 AND _rev MATCHES "^[0-9a-f]+$")
            # --no-optional-locks: a build must not take the index lock from the user's git.
            execute_process(COMMAND "${_git}" --no-optional-locks -C "${SOURCE_DIR}" status
                --porcelain --untracked-files=no
                OUTPUT_VARIABLE _status RESULT_VARIABLE _rc ERROR_QUIET)
            if(NOT _rc EQUAL 0)
                set(_rev "")
            elseif(NOT _status STREQUAL "")
                string(APPEND _rev "-dirty")
            endif()
        else()
            set(_rev "")
        endif()
    endif()
    set(_text "/* Written by harnessRevision.cmake at build time: the revision of ")
    string(APPEND _text "${SOURCE_DIR}. */\n")
    if(NOT _rev STREQUAL "")
        string(APPEND _text "#define BENCH_BUILD_REVISION \"${_rev}\"\n")
    endif()
    set(_old "")
    if(EXISTS "${OUTPUT}")
        file(READ "${OUTPUT}" _old)
    endif()
    if(NOT _old STREQUAL _text)
        file(WRITE "${OUTPUT}" "${_text}")
    endif()
    return()
endif()

set(_harness_revision_script "${CMAKE_CURRENT_LIST_FILE}")

function(harness_embed_revision target scope source_dir)
    set(header "${CMAKE_BINARY_DIR}/harness_revision/revision.h")
    if(NOT TARGET harness_revision)
        add_custom_target(harness_revision
            COMMAND "${CMAKE_COMMAND}" "-DSOURCE_DIR=${source_dir}" "-DOUTPUT=${header}"
                    -P "${_harness_revision_script}"
            BYPRODUCTS "${header}"
            VERBATIM)
    endif()
    add_dependencies(${target} harness_revision)
    get_target_property(defs ${target} INTERFACE_COMPILE_DEFINITIONS)
    set(def "BENCH_REVISION_FILE=\"${header}\"")
    if(NOT defs OR NOT def IN_LIST defs)
        target_compile_definitions(${target} ${scope} "${def}")
    endif()
endfunction()
